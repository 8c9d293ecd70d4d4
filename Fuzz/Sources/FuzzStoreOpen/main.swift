import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzStoreOpen(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzStoreOpen(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
