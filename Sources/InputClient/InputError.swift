import WinkCore

/// Errors of `winkctl input`: the map file and the uinput device (the event socket's are `EventServerError`s,
/// which `InputSession` turns into a `ConnectionEnd`).
public typealias InputError = SubjectError<InputErrorCode>

/// What went wrong, deciding the exit code; the error's subject is the map file or uinput device.
public enum InputErrorCode: ExitCodeKind {
    /// The map file does not exist or cannot be read. Exit 66.
    case mapUnreadable
    /// The map file is not valid JSON or breaks the rules of SPEC.md "Input maps"; `problems` holds
    /// one line per problem, each naming the key (`mappings[1].action.key: unknown key name 'KEY_FOO'`).
    /// Exit 78.
    case invalidMap(problems: [String])
    /// `/dev/uinput` is missing, not writable, or refused the virtual device. Exit 69.
    case uinputUnavailable

    /// 66 for `mapUnreadable`, 78 for `invalidMap`, 69 for `uinputUnavailable`.
    public var exitCode: ExitCode {
        switch self {
        case .mapUnreadable: .noInput
        case .invalidMap: .configuration
        case .uinputUnavailable: .unavailable
        }
    }

    /// One line (`PATH: reason`), or for an invalid map one line per problem (`PATH: problem`).
    public func describe(subject: String, reason: String) -> String {
        if case .invalidMap(let problems) = self, !problems.isEmpty {
            return problems.map { "\(subject): \($0)" }.joined(separator: "\n")
        }
        return "\(subject): \(reason)"
    }
}

/// An input map's problems are one line each.
extension SubjectError: MultiLineError where Code == InputErrorCode {
    /// One line per problem of an invalid map, `PATH: problem` with control characters escaped; else `description`.
    public var lines: [String] {
        if case .invalidMap(let problems) = code, !problems.isEmpty {
            return problems.map { "\(visibleControlCharacters(subject)): \(visibleControlCharacters($0))" }
        }
        return [description]
    }
}
