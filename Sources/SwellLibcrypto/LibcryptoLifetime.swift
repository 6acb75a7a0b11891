import COpenSSLCrypto

/// libcrypto's process-wide state, kept until the process ends.
///
/// By default the first initialisation of libcrypto registers an exit handler
/// (`OPENSSL_cleanup`) that frees its tables while other threads may still be using them or
/// ending (their own clean-up frees per-thread state): a race that aborted `swell` at exit
/// now and then ("double free or corruption") after a run had succeeded. Initialised with
/// `OPENSSL_INIT_NO_ATEXIT`, libcrypto leaves that memory to the end of the process, as
/// every other library does.
///
/// The option counts only in the process's first initialisation, and three libraries start
/// libcrypto: the export digest (SwellCSV), libcurl (SwellHTTP) and libpq's TLS
/// (SwellPostgres). Each calls ``keepUntilExit()`` before its first use, so whichever
/// comes first sets it.
public enum LibcryptoLifetime {
    /// Initialises libcrypto without its exit handler. Called before each start of libcrypto:
    /// OpenSSL runs its initialisation once per process, thread-safely, and a later call costs
    /// a check of a flag (a direct call, where a lazy static could be optimised away).
    public static func keepUntilExit() {
        OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
