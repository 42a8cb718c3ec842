import Foundation
import WinkCore

/// Errors of calibration profiles: reading, writing and recording them.
///
/// `description` is the one line printed before exiting: the file concerned and what is wrong with it.
public typealias CalibrationProfileError = SubjectError<CalibrationProfileErrorCode>

/// What went wrong, deciding the exit code; the error's subject is the profile file, or the recording for `.noFace`.
public enum CalibrationProfileErrorCode: ExitCodeKind {
    /// The profile file does not exist or cannot be read. Exit 66.
    case missing
    /// The file is not a calibration profile: not JSON, a missing or mistyped key, an unsupported
    /// version. Exit 78 (a profile is configuration).
    case corrupt
    /// A recording step had no usable face (none found, or outside the quality gate). Exit 65.
    case noFace

    /// 66 for `missing`, 78 for `corrupt`, 65 for `noFace`.
    public var exitCode: ExitCode {
        switch self {
        case .missing: .noInput
        case .corrupt: .configuration
        case .noFace: .dataError
        }
    }
}

extension CalibrationProfile {
    /// Reads the profile at `path`.
    /// - Throws: `CalibrationProfileError.missing` (66) when the file does not exist or cannot be read,
    ///   `.corrupt` (78) naming the file and the first problem when it is not a valid profile.
    public static func load(path: String) throws -> CalibrationProfile {
        if let reason = nonRegularFileReason(path) {
            // "is a directory, not a file" did not say which file was meant ("profile": "." in a configuration).
            let named = reason.replacingOccurrences(of: "not a file", with: "not a calibration profile")
            throw CalibrationProfileError(.missing, subject: path, reason: named)
        }
        if let reason = oversizedSettingsFile(path, kind: "a calibration profile") {
            throw CalibrationProfileError(.corrupt, subject: path, reason: reason)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            let reason =
                !exists
                ? danglingLinkTarget(path).map { "a symbolic link to \($0), which does not exist" }
                    ?? "no such calibration profile (record one with winkctl calibrate)"
                : isDirectory.boolValue
                    ? "is a directory, not a calibration profile"
                    : "cannot read the calibration profile" + readFailureNote(path)
            throw CalibrationProfileError(.missing, subject: path, reason: reason)
        }
        // A key given twice: JSON keeps one of them without a word (the configuration refuses it too). Said
        // first, as it may be what made the profile invalid ("version": "x" and the saved "version").
        if (try? JSONSerialization.jsonObject(with: data)) != nil,
            let repeated = JSONDuplicateKeys.find(in: data).first
        {
            throw CalibrationProfileError(
                .corrupt, subject: path, reason: "not a valid calibration profile: \(repeated)")
        }
        do {
            return try decode(data)
        } catch let error as DecodingError {
            throw CalibrationProfileError(
                .corrupt, subject: path, reason: "not a valid calibration profile: \(describe(error))")
        } catch {
            // JSONSerialization's error (`decode`): where and what.
            throw CalibrationProfileError(
                .corrupt, subject: path,
                reason: "not a valid calibration profile: \(notValidJSON(error))")
        }
    }

    /// Decodes profile JSON.
    /// - Throws: `DecodingError` for a profile that breaks its rules; JSONSerialization's error (where and
    ///   what) for text that is not JSON.
    public static func decode(_ data: Data) throws -> CalibrationProfile {
        do {
            return try JSONDecoder().decode(CalibrationProfile.self, from: data)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // JSONDecoder says "not valid JSON" with no key or reason, also of a number too small for a Double
            // (1e-400). JSONSerialization either says why the text is not JSON (its error is thrown) or reads
            // that number as 0, and the profile is decoded from its reading: checked and named as any other.
            let reading = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: data))
            return try JSONDecoder().decode(CalibrationProfile.self, from: reading)
        }
    }

    /// The profile as pretty-printed JSON with sorted keys (stable for diffs), ending in a newline.
    /// - Throws: `EncodingError` for a value JSON cannot hold (a non-finite number).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// Writes the profile to `path` as every output is written (`PendingOutput`: a temporary file beside it,
    /// renamed over it when complete, keeping the old file's permission bits; through a symbolic link, its
    /// target is replaced). Foundation's atomic write reset a 0600 profile to 0644 and called a full disk
    /// "I/O error while writing".
    /// - Throws: `OutputFileError` naming the file: `.cannotCreate` (73: "no such directory DIR", no
    ///   permission), `.writeFailed` (74: "no space left on the device").
    public func save(to path: String) throws {
        let pending = try PendingOutput(destination: path, deferringSignals: true)
        let data = try encoded()
        let fd = open(pending.temporary, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            pending.discard()
            throw OutputFile.error(for: path, errno: code)
        }
        let failure = data.withUnsafeBytes { writeAll($0, to: fd) } ?? (fsync(fd) == 0 ? nil : errno)
        if close(fd) != 0, failure == nil {
            let code = errno
            pending.discard()
            throw OutputFile.error(for: path, errno: code)
        }
        if let failure {
            pending.discard()
            throw OutputFile.error(for: path, errno: failure)
        }
        try pending.commit()
    }

    /// "key.path: what is wrong" for a decoding error; Foundation's message for a JSON syntax error.
    static func describe(_ error: Error) -> String {
        func path(_ p: [CodingKey]) -> String {
            let text = p.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "" : text + ": "
        }
        switch error {
        case DecodingError.typeMismatch(let type, let ctx):
            return "\(path(ctx.codingPath))expected \(jsonTypeName(type))"
        case DecodingError.valueNotFound(let type, let ctx):
            return "\(path(ctx.codingPath))expected \(jsonTypeName(type)), got null"
        case DecodingError.keyNotFound(let key, let ctx):
            return "\(path(ctx.codingPath + [key]))required"
        case DecodingError.dataCorrupted(let ctx):
            let underlying = (ctx.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return "\(path(ctx.codingPath))\(underlying ?? ctx.debugDescription)".replacingOccurrences(
                of: "\n", with: " ")
        default:
            return "\(error)".replacingOccurrences(of: "\n", with: " ")
        }
    }
}
