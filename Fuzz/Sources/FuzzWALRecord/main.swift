import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzWALRecord(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzWALRecord(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
