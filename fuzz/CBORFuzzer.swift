// libFuzzer entry for the CBOR decoder WebAuthn reads attestation objects, authenticator data
// and COSE keys with: bytes an unauthenticated client controls. Built by fuzz/run.sh with
// `swiftc -sanitize=fuzzer,address` from Sources/WebAuthn/CBOR*.swift alone.
// Beyond "no crash", it checks on every input:
//  - a decoded prefix decodes alone to the same value, and from a slice that does not start at 0;
//  - the whole input decodes exactly when the prefix is all of it, and fails only for trailing bytes;
//  - every decoded value keeps within the limits.

@_cdecl("LLVMFuzzerTestOneInput")
public func cborFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = CBORLimits.default
    let whole = Result { () throws(CBORError) in try CBORDecoder.decode(bytes, limits: limits) }
    guard let (value, used) = try? CBORDecoder.decodePrefix(bytes[...], limits: limits) else {
        guard case .failure = whole else { preconditionFailure("the whole input decodes but no prefix does") }
        return 0
    }
    precondition(used >= 1 && used <= size, "the prefix length is out of range")
    precondition((try? CBORDecoder.decode(bytes[..<used], limits: limits)) == value, "the prefix alone decodes otherwise")
    let shifted = [0xff] + bytes
    precondition((try? CBORDecoder.decodePrefix(shifted[1...], limits: limits))?.value == value, "a shifted slice decodes otherwise")
    switch whole {
    case .success(let decoded): precondition(used == size && decoded == value, "the whole input decodes otherwise")
    case .failure(let error): precondition(used < size && error.kind == .trailingBytes, "the whole input fails for another reason")
    }
    precondition(keepsWithin(limits, value, depth: 0), "a decoded value exceeds the limits")
    return 0
}

private func keepsWithin(_ limits: CBORLimits, _ value: CBOR, depth: Int) -> Bool {
    switch value {
    case .bytes(let bytes): return bytes.count <= limits.maxStringBytes
    case .text(let text): return text.utf8.count <= limits.maxStringBytes
    case .array(let items):
        return depth < limits.maxDepth && items.count <= limits.maxItems && items.allSatisfy { keepsWithin(limits, $0, depth: depth + 1) }
    case .map(let entries):
        return depth < limits.maxDepth && entries.count <= limits.maxItems
            && entries.allSatisfy { keepsWithin(limits, $0.key, depth: depth + 1) && keepsWithin(limits, $0.value, depth: depth + 1) }
    case .unsigned, .negative, .bool, .null: return true
    }
}
