/// `value` as `--help`, usage errors and configuration problems write a number: its description without a
/// trailing ".0" (`180`, `0.05`, `-1`, `1e+300`), so a Double limit reads as it was declared and every
/// message writes the same number the same way. Pure; thread-safe.
public func plainNumber(_ value: some CustomStringConvertible) -> String {
    let s = value.description
    return s.hasSuffix(".0") ? String(s.dropLast(2)) : s
}
