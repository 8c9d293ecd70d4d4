@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzModelFile(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzModelFile(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
