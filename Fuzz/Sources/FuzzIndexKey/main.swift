import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzIndexKey(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzIndexKey(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
