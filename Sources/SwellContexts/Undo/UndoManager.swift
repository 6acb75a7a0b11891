import Foundation

/// Records changes so they can be undone and redone: Foundation's `UndoManager`, which
/// Foundation on Linux does not have, with its names and behaviour (Store guarantees 54).
///
/// Actions are registered in groups; `undo()` runs the newest group's actions newest first,
/// and what they register while undoing becomes one group on the redo stack, so `redo()`
/// puts the changes back. With `groupsByEvent` (the default) a registration with no group
/// open opens one, and a managed object context closes it when the `perform` block (or, for
/// a main-queue context used directly, the main queue's turn) that made the change ends: one
/// group per event. Explicit `beginUndoGrouping()` / `endUndoGrouping()` pairs nest.
///
/// Like Foundation's, an undo manager is not thread-safe: use it on the queue of the context
/// it belongs to. A registration with no group open while `groupsByEvent` is false makes a
/// group of its own (Foundation raises an exception instead).
public final class UndoManager {
    /// Posted after `undo()` (object: the undo manager).
    public static let didUndoChangeNotification = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted after `redo()`.
    public static let didRedoChangeNotification = Notification.Name("NSUndoManagerDidRedoChangeNotification")
    /// Posted before `undo()` runs the group's actions.
    public static let willUndoChangeNotification = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted before `redo()` runs the group's actions.
    public static let willRedoChangeNotification = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted when a group opens.
    public static let didOpenUndoGroupNotification = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted when a group closes.
    public static let didCloseUndoGroupNotification = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")

    private final class Group {
        var actions: [Action] = []
        var name = ""
        var isEmpty: Bool { actions.isEmpty }
    }

    private enum Action {
        case call(target: ObjectIdentifier, run: () -> Void)
        case group(Group)
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// The groups being built, outermost first.
    private var openGroups: [Group] = []
    /// Whether the outermost open group was opened by a registration (`groupsByEvent`).
    private var openedByEvent = false
    /// Counts the groups opened by events, so a context closes only the one it saw open.
    private var eventGroupSerial: UInt64 = 0
    private var disabledCount = 0

    /// Creates an empty undo manager.
    public init() {}

    /// Whether a registration with no group open opens one (closed at the end of the event). Default true.
    public var groupsByEvent = true

    /// How many top-level groups are kept (the oldest go first); 0, the default, keeps every one.
    public var levelsOfUndo = 0 {
        didSet { trim() }
    }

    /// How deeply groups are nested now (0: none open).
    public var groupingLevel: Int { openGroups.count }

    /// Whether `undo()` is running its actions.
    public private(set) var isUndoing = false
    /// Whether `redo()` is running its actions.
    public private(set) var isRedoing = false

    /// Whether registrations are recorded (see `disableUndoRegistration()`).
    public var isUndoRegistrationEnabled: Bool { disabledCount == 0 }

    /// Stops recording registrations until a matching `enableUndoRegistration()`; calls nest.
    public func disableUndoRegistration() { disabledCount += 1 }

    /// Undoes one `disableUndoRegistration()`.
    public func enableUndoRegistration() {
        precondition(disabledCount > 0, "UndoManager: enableUndoRegistration() without a matching disableUndoRegistration()")
        disabledCount -= 1
    }

    /// Whether there is a group to undo (an open event group counts once it holds an action).
    public var canUndo: Bool {
        !undoStack.isEmpty || (openedByEvent && groupingLevel == 1 && !(openGroups.first?.isEmpty ?? true))
    }

    /// Whether there is a group to redo.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// Opens a group: the actions registered until the matching `endUndoGrouping()` undo together.
    public func beginUndoGrouping() {
        openGroups.append(Group())
        NotificationCenter.default.post(name: Self.didOpenUndoGroupNotification, object: self)
    }

    /// Closes the innermost open group; a closed top-level group with actions goes on the undo stack.
    public func endUndoGrouping() {
        precondition(!openGroups.isEmpty, "UndoManager: endUndoGrouping() without a matching beginUndoGrouping()")
        let group = openGroups.removeLast()
        if let parent = openGroups.last {
            if !group.isEmpty { parent.actions.append(.group(group)) }
        } else {
            openedByEvent = false
            if !group.isEmpty {
                undoStack.append(group)
                trim()
            }
        }
        NotificationCenter.default.post(name: Self.didCloseUndoGroupNotification, object: self)
    }

    /// Records `handler` to run on `target` when the current group is undone (or, while undoing,
    /// redone). A registration that is not part of an undo or redo clears the redo stack. The
    /// target is not retained: once it is gone, its actions do nothing.
    public func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        guard isUndoRegistrationEnabled else { return }
        let single = openGroups.isEmpty && !groupsByEvent
        if openGroups.isEmpty {
            beginUndoGrouping()
            if !single {
                openedByEvent = true
                eventGroupSerial &+= 1
            }
        }
        // The target is held weakly, as Foundation's undo manager does not retain it: a context
        // owns its undo manager, and its actions must not keep it alive.
        openGroups[openGroups.count - 1].actions.append(.call(target: ObjectIdentifier(target), run: { [weak target] in
            if let target { handler(target) }
        }))
        if !isUndoing && !isRedoing { redoStack.removeAll() }
        if single { endUndoGrouping() }
    }

    /// Names the group being built (or, with none open, the newest group to undo): "Undo Typing".
    public func setActionName(_ name: String) {
        if let group = openGroups.last ?? undoStack.last { group.name = name }
    }

    /// The name of the group `undo()` would undo ("" when unnamed or none).
    public var undoActionName: String { (openedByEvent ? openGroups.first : nil)?.name ?? undoStack.last?.name ?? "" }

    /// The name of the group `redo()` would redo.
    public var redoActionName: String { redoStack.last?.name ?? "" }

    /// Undoes the newest group, closing the group an event opened first. Its actions run newest
    /// first; what they register becomes one group to redo.
    public func undo() {
        if openedByEvent && groupingLevel == 1 { endUndoGrouping() }
        precondition(openGroups.isEmpty, "UndoManager: undo() with \(groupingLevel) group(s) open: end them first")
        guard let group = undoStack.popLast() else { return }
        replay(group, undoing: true)
    }

    /// Redoes the group the newest `undo()` undid.
    public func redo() {
        precondition(openGroups.isEmpty, "UndoManager: redo() with \(groupingLevel) group(s) open: end them first")
        guard let group = redoStack.popLast() else { return }
        replay(group, undoing: false)
    }

    /// Undoes the newest group nested in the open group; with no group open, `undo()`.
    public func undoNestedGroup() {
        guard let open = openGroups.last, !(openedByEvent && groupingLevel == 1) else { return undo() }
        guard let index = open.actions.lastIndex(where: { if case .group = $0 { true } else { false } }),
              case .group(let nested) = open.actions.remove(at: index) else { return }
        replay(nested, undoing: true)
    }

    /// Forgets every group, to undo and to redo.
    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        for group in openGroups { group.actions.removeAll() }
    }

    /// Forgets every action registered for `target`.
    public func removeAllActions(withTarget target: AnyObject) {
        let identifier = ObjectIdentifier(target)
        func prune(_ group: Group) {
            group.actions.removeAll { action in
                switch action {
                case .call(let owner, _): return owner == identifier
                case .group(let nested):
                    prune(nested)
                    return nested.isEmpty
                }
            }
        }
        for group in undoStack + redoStack + openGroups { prune(group) }
        undoStack.removeAll(where: \.isEmpty)
        redoStack.removeAll(where: \.isEmpty)
    }

    // MARK: For contexts

    /// The group an event opened and has not closed, by its serial number; nil when none is open.
    var openEventGroup: UInt64? { openedByEvent ? eventGroupSerial : nil }

    /// Closes the group an event opened, when it is still the one numbered `serial` (any when nil).
    func closeEventGroup(_ serial: UInt64? = nil) {
        guard openedByEvent, groupingLevel == 1, serial == nil || serial == eventGroupSerial else { return }
        endUndoGrouping()
    }

    // MARK: Running groups

    private func replay(_ group: Group, undoing: Bool) {
        NotificationCenter.default.post(name: undoing ? Self.willUndoChangeNotification : Self.willRedoChangeNotification, object: self)
        let inverse = Group()
        inverse.name = group.name
        let outer = openGroups
        let outerByEvent = openedByEvent
        openGroups = [inverse]
        openedByEvent = false
        if undoing { isUndoing = true } else { isRedoing = true }
        run(group)
        isUndoing = false
        isRedoing = false
        openGroups = outer
        openedByEvent = outerByEvent
        if !inverse.isEmpty {
            if undoing {
                redoStack.append(inverse)
            } else {
                undoStack.append(inverse)
                trim()
            }
        }
        NotificationCenter.default.post(name: undoing ? Self.didUndoChangeNotification : Self.didRedoChangeNotification, object: self)
    }

    private func run(_ group: Group) {
        for action in group.actions.reversed() {
            switch action {
            case .call(_, let body): body()
            case .group(let nested): run(nested)
            }
        }
    }

    private func trim() {
        if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }
}
