import CWinkVision
import Foundation
import WinkCore

/// Where the compact binary cache of the 68-point model lives, and how a load went.
///
/// dlib's deserialiser takes about 1 s for the 100 MB model file; the cache (flat little-endian arrays of
/// the predictor's initial shape, regression forests, anchor indices and deltas, behind a header with a
/// format version, the model file's size and modification time, and the payload's SHA-256) loads the
/// same model, bit for bit, in a few tens of milliseconds. It is built from the model file on first use
/// and rebuilt whenever it does not match (another model file, a changed file, a corrupt or truncated
/// cache, another format version): a cache is never trusted without its checks. Layout: Models/README.md.
public struct ModelCache: Sendable, Equatable {
    /// The directory holding cache files (created on first use, mode 0755).
    public var directory: String

    /// A cache in `directory`.
    public init(directory: String) {
        self.directory = directory
    }

    /// `$CACHE_DIRECTORY` (set by systemd's `CacheDirectory=`), else `$XDG_CACHE_HOME/winkd`, else
    /// `$HOME/.cache/winkd` (XDG Base Directory Specification 0.8: a
    /// relative `XDG_CACHE_HOME` is ignored), or `nil` when neither is set.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String?
    {
        // systemd's CacheDirectory= (systemd.exec(5)) hands the service its cache directory.
        if let dir = environment["CACHE_DIRECTORY"]?.split(separator: ":").first, dir.hasPrefix("/") {
            return String(dir)
        }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/winkd" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/winkd" }
        return nil
    }

    /// The cache in `defaultDirectory(environment:)`, or `nil` when there is no such directory.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> ModelCache? {
        defaultDirectory(environment: environment).map(ModelCache.init(directory:))
    }

    /// The cache file for a model file: its base name and a hash of its absolute path (FNV-1a 64), so two
    /// models with the same name in different directories do not keep replacing each other.
    public func file(for modelPath: String) -> String {
        let absolute = URL(fileURLWithPath: modelPath).standardizedFileURL.path
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in absolute.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let name = (absolute as NSString).lastPathComponent
        return directory + "/" + name + "-" + String(hash, radix: 16) + ".wspc"
    }

    /// How a model load went.
    public enum Outcome: Sendable, Equatable {
        /// Loaded from a valid cache.
        case hit
        /// Loaded from the model file and the cache written. `reason` says why the cache was not usable
        /// (absent, stale, corrupt).
        case built(reason: String)
        /// Loaded from the model file; the cache could not be written (`reason`: an unwritable directory,
        /// a full disk). The model works; the next start is slow again.
        case notWritten(reason: String)
    }
}

extension ShapePredictor {
    /// Loads the model through `cache` when given (see `ModelCache`), otherwise from the file alone.
    ///
    /// The model file is always the authority: a cache is used only when it matches the file's size and
    /// modification time and its SHA-256 and structure check out. Errors about the model file are those
    /// of `init(path:)`; cache problems never throw (they show in the outcome).
    /// - Returns: the predictor and how it was loaded (`nil` outcome when `cache` is `nil`).
    /// - Throws: `FaceTrackingError` with `.modelMissing`, `.modelUnreadable`, `.modelNotDlib` or
    ///   `.modelWrongParts` (all exit 78), naming `path`.
    public static func load(path: String, cache: ModelCache?) throws -> (
        predictor: ShapePredictor, outcome: ModelCache.Outcome?
    ) {
        let (handle, outcome) = try loadHandle(path: path, cache: cache)
        return (ShapePredictor(adopting: handle, path: path), outcome)
    }

    /// `load(path:cache:)` without the outcome.
    /// - Throws: as `init(path:)`.
    public convenience init(path: String, cache: ModelCache?) throws {
        self.init(adopting: try Self.loadHandle(path: path, cache: cache).handle, path: path)
    }

    private static func loadHandle(path: String, cache: ModelCache?) throws -> (
        handle: OpaquePointer, outcome: ModelCache.Outcome?
    ) {
        guard let cache else { return (try loadModelFile(path), nil) }
        if let reason = nonRegularFileReason(path) {  // before the cache, which would stand in for a FIFO
            throw FaceTrackingError(.modelUnreadable, subject: path, reason: reason)
        }
        let file = cache.file(for: path)
        var message = [CChar](repeating: 0, count: 512)
        var out: OpaquePointer?
        if wv_predictor_cache_load(path, file, &out, &message, message.count) == WV_OK, let out {
            return (out, .hit)
        }
        let why = String(cString: message)
        let handle = try loadModelFile(path)
        do {
            try FileManager.default.createDirectory(atPath: cache.directory, withIntermediateDirectories: true)
        } catch {
            return (
                handle,
                .notWritten(reason: "cannot create \(cache.directory): \((error as NSError).localizedDescription)")
            )
        }
        message = [CChar](repeating: 0, count: 512)
        guard wv_predictor_cache_write(handle, path, file, &message, message.count) == WV_OK else {
            return (handle, .notWritten(reason: "\(file): \(String(cString: message))"))
        }
        return (handle, .built(reason: why))
    }

    /// Whether both predictors hold exactly the same model (every float bit-identical).
    public func isIdentical(to other: ShapePredictor) -> Bool {
        wv_predictor_identical(handle, other.handle) == 1
    }
}
