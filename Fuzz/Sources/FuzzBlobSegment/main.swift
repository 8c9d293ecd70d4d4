import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzBlobSegment(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzBlobSegment(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
