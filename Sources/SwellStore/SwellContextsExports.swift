// `import SwellStore` is the one import users write: the contexts (SwellContexts), the model
// and requests (SwellStoreCore, re-exported by SwellContexts) and the typed layer here.
@_exported import SwellContexts
