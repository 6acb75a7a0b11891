// The model, values, predicates, requests and the store protocol are SwellStoreCore's;
// SwellContexts re-exports them, and `import SwellStore` brings both with the typed layer.
@_exported import SwellStoreCore
