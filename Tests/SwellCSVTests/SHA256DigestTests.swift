import SwellCSV
import Testing

/// The export digest against FIPS 180-2's published SHA-256 vectors, fed whole and in pieces.
@Suite struct SHA256DigestTests {
    @Test func publishedVectors() {
        #expect(SHA256Digest.hex(of: []) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.hex(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Digest.hex(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func aMillionAsInUnevenPieces() {
        let digest = SHA256Digest()
        var left = 1_000_000
        var piece = 1
        while left > 0 {
            let count = min(piece, left)
            [UInt8](repeating: UInt8(ascii: "a"), count: count).withUnsafeBytes { digest.update($0) }
            left -= count
            piece = piece * 3 % 9_973 + 1
        }
        #expect(digest.finishHex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
