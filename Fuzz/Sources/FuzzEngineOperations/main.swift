import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzEngineOperations(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzEngineOperations(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
