import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzPage(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzPage(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
