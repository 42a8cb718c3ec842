import Foundation
import WinkCore

extension Configuration {
    /// Where winkd finds its configuration and calibration profile when no flag names them.
    ///
    /// Two folders are searched in order, and the first `config.json` present is read (the same for
    /// `profile.json`, each on its own):
    /// 1. the user's, `$XDG_CONFIG_HOME/winkd` (an absolute path), else `$HOME/.config/winkd` (the XDG Base
    ///    Directory specification): what winkd reads as a user service (`systemctl --user`);
    /// 2. the system's, `/etc/winkd`: what the system service reads, which runs as the user `winkd` with no
    ///    home of its own (`/`, and `ProtectHome=yes` hides `/home`), and the default for every user.
    ///
    /// So a user's own file wins over the system-wide one, as with PipeWire or fontconfig. No file present
    /// is fine: the built-in defaults apply. `--config FILE` (and `--profile FILE`) bypass the search.
    public struct Location: Sendable, Equatable {
        /// The user's folder, or nil when neither `XDG_CONFIG_HOME` nor `HOME` is a usable absolute path.
        public var userDirectory: String?
        /// The system-wide folder, `/etc/winkd`.
        public var systemDirectory: String

        /// The folders for `environment` (a value of `/` for `HOME` counts as none: a system user's).
        public init(environment: [String: String] = ProcessInfo.processInfo.environment,
                    systemDirectory: String = "/etc/winkd") {
            if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
                userDirectory = URL(fileURLWithPath: xdg).appendingPathComponent("winkd").path
            } else if let home = environment["HOME"], home.hasPrefix("/"), home != "/" {
                userDirectory = URL(fileURLWithPath: home).appendingPathComponent(".config/winkd").path
            }
            self.systemDirectory = systemDirectory
        }

        /// The places searched for `name` (`config.json`, `profile.json`), in order.
        public func candidates(_ name: String) -> [String] {
            ([userDirectory].compactMap { $0 } + [systemDirectory]).map { $0 + "/" + name }
        }

        /// The first of `candidates(name)` that exists (as anything: a directory there is reported when read,
        /// not skipped; so is a symbolic link whose target is gone, which was passed over for the next place
        /// or the defaults without a word), or nil.
        public func firstPresent(_ name: String) -> String? {
            candidates(name).first { path in
                var st = stat()
                return lstat(path, &st) == 0
            }
        }
    }

    /// A configuration file that does not exist: `--config` naming a missing file. Exit 66 (`EX_NOINPUT`),
    /// as for a missing layout, map or profile.
    public struct Missing: ExitCodeError {
        /// The path given.
        public var path: String
        /// Where `path` points when it is a symbolic link whose target does not exist.
        public var danglingTarget: String? = nil
        /// "PATH: no such configuration file", or "PATH: a symbolic link to TARGET, which does not exist".
        public var description: String {
            danglingTarget.map { "\(path): a symbolic link to \($0), which does not exist" }
                ?? "\(path): no such configuration file"
        }
        /// 66 (`noInput`).
        public var exitCode: ExitCode { .noInput }
    }

    /// A configuration file that exists but cannot be read: exit 66, with the system's reason.
    public struct Unreadable: ExitCodeError {
        /// The file's path.
        public var path: String
        /// The failed call's `errno`, e.g. `EISDIR: Is a directory`; nil if reading it again succeeded.
        public var reason: Errno?
        /// What is wrong instead, when no call failed: "not a regular file (a FIFO)".
        public var problem: String? = nil
        /// "PATH: cannot read the configuration file", with the problem or the errno.
        public var description: String {
            if let problem { return "\(path): cannot read the configuration file: \(problem)" }
            return "\(path): cannot read the configuration file" + (reason.map { " (\($0))" } ?? "")
        }
        /// 66 (`noInput`).
        public var exitCode: ExitCode { .noInput }
    }

}
