import Foundation

/// Where the event socket lives (SPEC.md "Programs", `--socket`).
public enum EventSocketPath {
    /// The default socket path: `$WINK_SOCKET`, else `$XDG_RUNTIME_DIR/winkd/events.sock`, else
    /// `/run/winkd/events.sock`. Empty variables count as unset; a relative `XDG_RUNTIME_DIR` is ignored, as
    /// the XDG Base Directory specification requires it to be absolute. Used by both winkd and winkctl.
    public static func `default`(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["WINK_SOCKET"], !explicit.isEmpty { return explicit }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return (runtime.hasSuffix("/") ? runtime : runtime + "/") + "winkd/events.sock"
        }
        return systemPath
    }

    /// The system-wide path, for a daemon run by systemd: `/run/winkd/events.sock`.
    public static let systemPath = "/run/winkd/events.sock"

    /// The longest path a Unix socket address holds, in bytes: `sun_path` (108) minus its NUL, i.e. 107.
    public static var maximumLength: Int { sunPathCapacity - 1 }
}
