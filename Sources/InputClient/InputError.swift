import WinkCore

/// Errors of `winkctl input`: the map file, the uinput device, the event socket.
public struct InputError: ExitCodeError, Equatable {
    public enum Code: Sendable, Equatable {
        /// The map file does not exist or cannot be read. Exit 66.
        case mapUnreadable
        /// The map file is not valid JSON or breaks the rules of SPEC.md "Input maps"; `problems` holds
        /// one line per problem, each naming the key (`mappings[1].action.key: unknown key name 'KEY_FOO'`).
        /// Exit 78.
        case invalidMap(problems: [String])
        /// `/dev/uinput` is missing, not writable, or refused the virtual device. Exit 69.
        case uinputUnavailable
        /// The event socket could not be reached or spoke something other than the winkd protocol. Exit 69.
        case socket
    }

    public var code: Code
    /// The file, device or socket path the error is about.
    public var path: String
    /// What is wrong, for a person to act on.
    public var reason: String

    public init(_ code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    /// One line (`PATH: reason`), or for an invalid map one line per problem (`PATH: problem`).
    public var description: String {
        if case .invalidMap(let problems) = code, !problems.isEmpty {
            return problems.map { "\(path): \($0)" }.joined(separator: "\n")
        }
        return "\(path): \(reason)"
    }

    public var exitCode: ExitCode {
        switch code {
        case .mapUnreadable: .noInput
        case .invalidMap: .configuration
        case .uinputUnavailable, .socket: .unavailable
        }
    }
}
