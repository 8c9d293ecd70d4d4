// The object graph (managed objects, contexts, coordinator) is built on top of the engine in later work.
// Until then the module gives its users the engine, so `import Strata` is the one import they need.
@_exported import StrataStorage
