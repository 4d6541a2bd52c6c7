/// Differential tests of the JSON fast paths start from valid lines and damage them: one to three
/// bytes replaced from `alphabet`, removed, or inserted, at seeded random places.
public enum ByteMutations {
    public static func mutate(_ seed: String, alphabet: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = Array(seed.utf8)
        for _ in 0..<Int.random(in: 1...3, using: &generator) where !bytes.isEmpty {
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes[index] = alphabet.randomElement(using: &generator)!
            case 1: bytes.remove(at: index)
            default: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
            }
        }
        return bytes
    }
}
