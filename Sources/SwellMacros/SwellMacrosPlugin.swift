import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin behind `@Entity` and its companions (declared in `SwellStore`).
@main
struct SwellMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        EntityMacro.self, EntityPropertyMacro.self, EntityMarkerMacro.self, UniqueConstraintMacro.self,
    ]
}
