import Foundation
import WinkCore

/// A request a client sends on the event socket (SPEC.md "The event socket").
public enum ClientMessage: Equatable, Sendable {
    /// `{"type":"subscribe","id":1,"events":["winkLeft"],"coefficients":false}`: from now on, send only
    /// these events, and coefficient lines if `coefficients` is true. `id` (optional) is echoed in the
    /// reply. `events` nil (the key absent or null) means every event, as before any subscribe (SPEC.md);
    /// an empty list subscribes to no events. `"analyzers":true` (optional, default false) also asks for
    /// the analyzer table's `analyzers` line and a `rows` line per frame (`AnalyzersLine`, `RowsLine`).
    case subscribe(id: Int?, events: [String]?, coefficients: Bool, analyzers: Bool = false)
    /// `{"type":"status","id":2}`: asks for the daemon's state; answered with a `status` line carrying the
    /// same `id` (`StatusLine` with `clients` and `fps`).
    case status(id: Int?)

    /// Parses one line (without its newline).
    ///
    /// - Throws: `ProtocolError` with code `bad_json` (not UTF-8 JSON, or not an object), `bad_request`
    ///   (no `type`, a field of the wrong JSON type, or a key given twice: JSON keeps only one of its values, so
    ///   `"events"` twice subscribed to the first list without a word) or `unknown_type`. The error carries the
    ///   request's `id` when one could be read.
    public static func parse<Bytes: Collection>(_ line: Bytes) throws -> ClientMessage where Bytes.Element == UInt8 {
        let fields: [String: JSONValue]
        do {
            guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: Data(line)) else {
                throw ProtocolError(.badJSON, id: nil, "a request must be a JSON object")
            }
            fields = object
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw ProtocolError(.badJSON, id: nil, "not a JSON line")
        }
        var id: Int?
        if let raw = fields["id"], raw != .null {
            guard case .integer(let number) = raw else {
                throw ProtocolError(.badRequest, id: nil, "'id' must be an integer")
            }
            id = number
        }
        if let repeated = JSONDuplicateKeys.find(in: Data(line)).first {
            throw ProtocolError(.badRequest, id: id, repeated)
        }
        guard case .string(let type)? = fields["type"] else {
            throw ProtocolError(.badRequest, id: id, "a request needs a string 'type'")
        }
        switch type {
        case "subscribe":
            var events: [String]?
            switch fields["events"] {
            case nil, .null?:
                events = nil
            case .array(let list)?:
                events = try list.map { item in
                    guard case .string(let name) = item else {
                        throw ProtocolError(.badRequest, id: id, "'events' must hold strings")
                    }
                    return name
                }
            default:
                throw ProtocolError(
                    .badRequest, id: id, "'events' must be a list of event names (or absent: every event)")
            }
            var coefficients = false
            if let raw = fields["coefficients"], raw != .null {
                guard case .bool(let flag) = raw else {
                    throw ProtocolError(.badRequest, id: id, "'coefficients' must be true or false")
                }
                coefficients = flag
            }
            var analyzers = false
            if let raw = fields["analyzers"], raw != .null {
                guard case .bool(let flag) = raw else {
                    throw ProtocolError(.badRequest, id: id, "'analyzers' must be true or false")
                }
                analyzers = flag
            }
            return .subscribe(id: id, events: events, coefficients: coefficients, analyzers: analyzers)
        case "status":
            return .status(id: id)
        default:
            throw ProtocolError(.unknownType, id: id, "unknown request type '\(type.prefix(64))'")
        }
    }
}

/// Any JSON value, decoded strictly: `true` is never an integer and `1.5` never an `Int`. Shared by the
/// protocol's request parser and `winkctl input`'s map parser, so both can name the type they found.
public enum JSONValue: Decodable, Equatable, Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number that decodes as an `Int` (a whole number in range).
    case integer(Int)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes one value, trying null, Bool, Int, Double, String, array and object in that order.
    /// - Throws: `DecodingError` when the value is none of them.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

/// A client broke the protocol or made a request the server refuses; answered with an `error` line.
public struct ProtocolError: Error, Equatable, Sendable {
    /// The `code` field of the error line.
    public enum Code: String, Sendable {
        /// The line is not a JSON object.
        case badJSON = "bad_json"
        /// The `type` is not one the server knows.
        case unknownType = "unknown_type"
        /// A field is missing or has the wrong type.
        case badRequest = "bad_request"
        /// A subscribe named an event the server does not emit.
        case unknownEvent = "unknown_event"
        /// The line is longer than 8 KiB; the server disconnects after saying so.
        case lineTooLong = "line_too_long"
        /// The server already has its maximum number of clients; sent instead of `hello`, followed by a
        /// `status` line with the daemon's state, and the server disconnects.
        case tooManyClients = "too_many_clients"
    }

    /// Which refusal; the error line's `code`.
    public var code: Code
    /// The request's `id`, when it had a readable one.
    public var id: Int?
    /// One line for a person, sent as the error line's `message`.
    public var message: String

    /// A refusal of kind `code` for the request `id` (nil when it had no readable one).
    public init(_ code: Code, id: Int?, _ message: String) {
        self.code = code
        self.id = id
        self.message = message
    }
}

extension JSONValue {
    /// The value's JSON type in words, for messages ("found a string").
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value as a `Double` when it is a JSON number (integer or not), else nil.
    public var numberValue: Double? {
        switch self {
        case .integer(let n): Double(n)
        case .number(let x): x
        default: nil
        }
    }
}
