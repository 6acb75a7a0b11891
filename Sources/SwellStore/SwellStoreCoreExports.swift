// The model, values, predicates, requests and the store protocol are SwellStoreCore's;
// `import SwellStore` brings them with the contexts, so a user writes one import.
@_exported import SwellStoreCore
