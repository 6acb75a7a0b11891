import COpenSSLCrypto

/// A SHA-256 computed incrementally (OpenSSL's libcrypto, which libcurl links already): the
/// digest of an export file from its bytes as they are written.
///
/// Not `Sendable`: one writer feeds it.
public final class SHA256Digest {
    private let context: OpaquePointer

    /// A digest of nothing yet.
    public init() {
        _ = LibcryptoLifetime.keptUntilExit
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

/// libcrypto's process-wide state, kept until the process ends: by default the first use of
/// libcrypto registers an exit handler (`OPENSSL_cleanup`) that frees its tables while other
/// threads may still be digesting or ending (their own clean-up frees per-thread state) —
/// a race that aborted `swell` at exit now and then ("double free or corruption") after a
/// run had succeeded. `OPENSSL_INIT_NO_ATEXIT` leaves the memory to the end of the process,
/// as every other library's. It must come before libcrypto's first initialisation, so
/// libcurl's process-wide set-up asks for it too (SwellHTTP's `CurlGlobal`).
enum LibcryptoLifetime {
    static let keptUntilExit: Void = {
        OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }()
}
