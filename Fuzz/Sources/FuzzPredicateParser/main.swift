@_cdecl("LLVMFuzzerTestOneInput")
public func FuzzPredicateParser(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzPredicateParser(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
