import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzRowRecord(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzRowRecord(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
