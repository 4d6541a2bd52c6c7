// libFuzzer entry for the line framing + JSON-RPC decoding path: the bytes a hostile
// client controls. Built by fuzz/run.sh with `swiftc -sanitize=fuzzer,address`.
// Beyond "no crash", it checks three properties on every input:
//  - the fast paths for request and response lines answer exactly as the general parser does;
//  - a result kept as bytes for passing through (RawResponse, RawJSON) is accepted exactly when
//    the parser accepts it, decodes to the same value and never holds a newline;
//  - a parsed JSON value re-encodes to text that parses back to the same value;
//  - the framer never hands out a line longer than its limit.

@_cdecl("LLVMFuzzerTestOneInput")
public func lineProtocolFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let maxLineBytes = 4096
    var framer = LineFramer(maxLineBytes: maxLineBytes)
    // Feed in two uneven chunks so partial reads are exercised too.
    let split = size / 3
    framer.append(bytes[0..<split])
    framer.append(bytes[split...])
    while let framed = framer.next() {
        guard case .line(let line) = framed else { continue }
        precondition(line.count <= maxLineBytes + 1, "framer exceeded its line limit")
        precondition(RPCDecoder.decode(line: line) == RPCDecoder.decodeInGeneral(line: line), "the request fast path disagrees")
        precondition(
            RPCResponse.decode(line: line, limits: .default) == RPCResponse.decodeInGeneral(line: line, limits: .default),
            "the response fast path disagrees")
        checkPassThrough(line)
        if let value = try? JSONParser.parse(line) {
            let again = try? JSONParser.parse(value.encoded())
            precondition(again == value || containsNaNOrNegativeZero(value), "JSON round trip changed the value")
        }
    }
    return 0
}

/// The gateway's pass-through reading of an answer line against the general parser.
private func checkPassThrough(_ line: [UInt8]) {
    let kept = RawResponse.decode(line: line, limits: .default)
    let general = RawResponse.decodeInGeneral(line: line, limits: .default)
    precondition((kept == nil) == (general == nil), "the pass-through reading accepts a different set of lines")
    if let kept, let general {
        precondition(kept.id == general.id, "the pass-through reading found another id")
        switch (kept.outcome, general.outcome) {
        case (.success(let bytes), .success(let encoded)):
            precondition(!bytes.bytes.contains(0x0A) && !bytes.bytes.contains(0x0D), "a passed-through result spans lines")
            precondition(bytes.decoded() == encoded.decoded() || containsNaNOrNegativeZero(encoded.decoded()), "a passed-through result means another value")
        case (.failure(let left), .failure(let right)):
            precondition(left == right, "the pass-through reading decoded another error")
        default:
            preconditionFailure("the pass-through reading disagrees on result or error")
        }
    }
    if let checked = RawJSON(validating: line[...]) {
        precondition((try? JSONParser.parse(line)) == checked.decoded(), "the checker accepted what the parser reads otherwise")
    }
}

/// Doubles like -0.0 compare equal after a round trip but NaN never does; the parser cannot make NaN.
private func containsNaNOrNegativeZero(_ value: JSON) -> Bool {
    switch value {
    case .double(let number): return number.isNaN
    case .array(let items): return items.contains(where: containsNaNOrNegativeZero)
    case .object(let members): return members.values.contains(where: containsNaNOrNegativeZero)
    default: return false
    }
}
