import WinkCore

/// A small arithmetic formula over blend-shape coefficients, as written in an analyzer row's `value`:
/// `"min(eyeBlinkLeft, 1 - eyeBlinkRight)"`, `"(mouthSmileLeft + mouthSmileRight) / 2"`, `"jawOpen"`.
///
/// Grammar: numbers, ARKit coefficient names (`BlendShape`), `+ - * /`, unary minus, parentheses, and the
/// functions `min(a, b, ...)`, `max(a, b, ...)`, `abs(a)`, `clamp(a)` (to 0...1). The result is clamped
/// to 0...1 when evaluated. Evaluation allocates nothing.
public indirect enum Formula: Sendable, Equatable, CustomStringConvertible {
    /// A number.
    case constant(Float)
    /// A coefficient's value, 0...1.
    case coefficient(BlendShape)
    /// `a + b`.
    case add(Formula, Formula)
    /// `a - b`.
    case subtract(Formula, Formula)
    /// `a * b`.
    case multiply(Formula, Formula)
    /// `a / b`; 0 when `b` is 0.
    case divide(Formula, Formula)
    /// `-a`.
    case negate(Formula)
    /// `min(a, b, ...)`.
    case minimum([Formula])
    /// `max(a, b, ...)`.
    case maximum([Formula])
    /// `abs(a)`.
    case absolute(Formula)
    /// `clamp(a)`: `a` limited to 0...1.
    case clamp(Formula)

    /// The formula's value for `c`, clamped to 0...1 (NaN becomes 0).
    @inline(__always)
    public func evaluate(_ c: BlendShapeCoefficients) -> Float {
        let v = raw(c)
        return v.isNaN ? 0 : min(1, max(0, v))
    }

    func raw(_ c: BlendShapeCoefficients) -> Float {
        switch self {
        case .constant(let x): return x
        case .coefficient(let s): return c[s]
        case .add(let a, let b): return a.raw(c) + b.raw(c)
        case .subtract(let a, let b): return a.raw(c) - b.raw(c)
        case .multiply(let a, let b): return a.raw(c) * b.raw(c)
        case .divide(let a, let b):
            let d = b.raw(c)
            return d == 0 ? 0 : a.raw(c) / d
        case .negate(let a): return -a.raw(c)
        case .minimum(let xs):
            var m = Float.infinity
            for x in xs { m = min(m, x.raw(c)) }
            return m
        case .maximum(let xs):
            var m = -Float.infinity
            for x in xs { m = max(m, x.raw(c)) }
            return m
        case .absolute(let a): return abs(a.raw(c))
        case .clamp(let a): return min(1, max(0, a.raw(c)))
        }
    }

    /// The coefficients the formula reads.
    public var inputs: Set<BlendShape> {
        switch self {
        case .constant: []
        case .coefficient(let s): [s]
        case .add(let a, let b), .subtract(let a, let b), .multiply(let a, let b), .divide(let a, let b):
            a.inputs.union(b.inputs)
        case .negate(let a), .absolute(let a), .clamp(let a): a.inputs
        case .minimum(let xs), .maximum(let xs): xs.reduce(into: Set()) { $0.formUnion($1.inputs) }
        }
    }

    /// The formula as text `init(parsing:)` reads back, binary operations in parentheses.
    public var description: String {
        switch self {
        case .constant(let x): "\(x)"
        case .coefficient(let s): s.rawValue
        case .add(let a, let b): "(\(a) + \(b))"
        case .subtract(let a, let b): "(\(a) - \(b))"
        case .multiply(let a, let b): "(\(a) * \(b))"
        case .divide(let a, let b): "(\(a) / \(b))"
        case .negate(let a): "-\(a)"
        case .minimum(let xs): "min(\(xs.map(\.description).joined(separator: ", ")))"
        case .maximum(let xs): "max(\(xs.map(\.description).joined(separator: ", ")))"
        case .absolute(let a): "abs(\(a))"
        case .clamp(let a): "clamp(\(a))"
        }
    }

    /// A parse error: what was expected and at which character (0-based).
    public struct ParseError: Error, CustomStringConvertible, Equatable {
        /// What was expected or found.
        public var message: String
        /// 0-based index of the offending character (Unicode scalar).
        public var position: Int
        /// `message` and the 1-based character position.
        public var description: String { "\(message) at character \(position + 1)" }
    }

    /// Parses `text`.
    /// - Throws: `ParseError` for a syntax error or an unknown coefficient name.
    public init(parsing text: String) throws {
        var parser = Parser(chars: Array(text.unicodeScalars))
        let f = try parser.expression()
        parser.skipSpace()
        guard parser.index == parser.chars.count else {
            throw parser.fail("unexpected '\(parser.chars[parser.index])'")
        }
        self = f
    }

    private struct Parser {
        var chars: [Unicode.Scalar]
        var index = 0
        /// Nesting of parentheses, unary minus and function calls; limited so that a hostile configuration
        /// cannot overflow the stack of this recursive-descent parser.
        var depth = 0
        static let maximumDepth = 64

        func fail(_ message: String) -> ParseError { ParseError(message: message, position: index) }

        mutating func skipSpace() {
            while index < chars.count, chars[index].properties.isWhitespace { index += 1 }
        }

        mutating func peek() -> Unicode.Scalar? {
            skipSpace()
            return index < chars.count ? chars[index] : nil
        }

        mutating func expression() throws -> Formula {
            var lhs = try term()
            while let c = peek(), c == "+" || c == "-" {
                index += 1
                let rhs = try term()
                lhs = c == "+" ? .add(lhs, rhs) : .subtract(lhs, rhs)
            }
            return lhs
        }

        mutating func term() throws -> Formula {
            var lhs = try factor()
            while let c = peek(), c == "*" || c == "/" {
                index += 1
                let start = index
                let rhs = try factor()
                // A divisor of constants that is 0 makes the row 0 for ever (evaluation maps x/0 to 0):
                // "mouthSmileLeft / 0" was taken, and its row never fired.
                if c == "/", rhs.inputs.isEmpty, rhs.raw(BlendShapeCoefficients()) == 0 {
                    throw ParseError(message: "division by zero", position: start)
                }
                lhs = c == "*" ? .multiply(lhs, rhs) : .divide(lhs, rhs)
            }
            return lhs
        }

        mutating func factor() throws -> Formula {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else {
                throw fail("formula nested more than \(Self.maximumDepth) levels deep")
            }
            guard let c = peek() else { throw fail("expected a number, a coefficient or '('") }
            if c == "-" {
                index += 1
                return .negate(try factor())
            }
            if c == "(" {
                index += 1
                let e = try expression()
                guard peek() == ")" else { throw fail("expected ')'") }
                index += 1
                return e
            }
            if c.properties.numericType != nil || c == "." {
                let start = index
                while index < chars.count, chars[index].properties.numericType != nil || chars[index] == "." {
                    index += 1
                }
                let s = String(String.UnicodeScalarView(chars[start..<index]))
                guard let x = Float(s) else { throw ParseError(message: "bad number '\(s)'", position: start) }
                return .constant(x)
            }
            if c.properties.isAlphabetic {
                let start = index
                while index < chars.count,
                    chars[index].properties.isAlphabetic || chars[index].properties.numericType != nil
                {
                    index += 1
                }
                let name = String(String.UnicodeScalarView(chars[start..<index]))
                if peek() == "(" {
                    index += 1
                    var args = [try expression()]
                    while peek() == "," {
                        index += 1
                        args.append(try expression())
                    }
                    guard peek() == ")" else { throw fail("expected ')' after the arguments of \(name)") }
                    index += 1
                    switch name {
                    case "min": return .minimum(args)
                    case "max": return .maximum(args)
                    case "abs" where args.count == 1: return .absolute(args[0])
                    case "clamp" where args.count == 1: return .clamp(args[0])
                    default:
                        throw ParseError(message: "unknown function '\(name)' (min, max, abs, clamp)", position: start)
                    }
                }
                guard let shape = BlendShape(rawValue: name) else {
                    let known = BlendShape.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ParseError(message: "unknown coefficient '\(name)' (known: \(known))", position: start)
                }
                return .coefficient(shape)
            }
            throw fail("unexpected '\(c)'")
        }
    }
}
