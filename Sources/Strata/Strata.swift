// `import Strata` is the one import an application needs: the object graph, and the engine types its API
// mentions (StoreConfiguration, StorageError, ...), which StrataStorage defines.
@_exported import StrataStorage
