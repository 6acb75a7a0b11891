import COpenSSLCrypto
import SwellLibcrypto

/// A SHA-256 computed incrementally (OpenSSL's libcrypto, which libcurl links already): the
/// digest of an export file from its bytes as they are written.
///
/// Not `Sendable`: one writer feeds it.
public final class SHA256Digest {
    private let context: OpaquePointer

    /// A digest of nothing yet.
    public init() {
        LibcryptoLifetime.keepUntilExit()
        // EVP_MD_CTX_new fails only when memory does: as Swift's own allocations do, that stops the process.
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto cannot start a SHA-256 digest")
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Adds `bytes`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest of everything added, as 64 lowercase hex digits (the digest is finished: add nothing after).
    public func finishHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The SHA-256 of `bytes`, in hex.
    public static func hex<Bytes: Sequence<UInt8>>(of bytes: Bytes) -> String {
        let digest = SHA256Digest()
        let array = Array(bytes)
        array.withUnsafeBytes { digest.update($0) }
        return digest.finishHex()
    }
}
