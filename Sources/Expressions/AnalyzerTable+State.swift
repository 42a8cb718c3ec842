import WinkCore

/// What one analyzer row is doing, as of the table's last `step` (or `reset`): what `winkctl monitor`
/// shows beside each row's value, so that "why did it not fire" can be answered by looking.
public enum AnalyzerRowState: Sendable, Equatable {
    /// Nothing under way, and nothing keeping the row from starting once its value reaches `enter`.
    case idle
    /// The value reached `enter` `held` seconds ago (frame time): a held row becomes active at
    /// `minDuration`, a one-shot row fires on release.
    case pending(held: Double)
    /// A held row's expression is under way (`began` was sent); `held` seconds since its onset.
    case active(held: Double)
    /// Ended by `maxDuration` or a closed gate: the value must drop below `exit` before the row can start
    /// again.
    case latched
    /// The row ended less than its `cooldown` ago: it cannot start for `remaining` more seconds.
    case coolingDown(remaining: Double)
    /// A row named in `suppressedBy` (`by`, its event name) is under way or ended less than this row's
    /// `cooldown` ago: this row cannot start.
    case suppressed(by: String)
    /// The face-quality gate the row needs is closed (head turned or tilted too far, face too small or too
    /// dark): the row cannot start.
    case gated(AnalyzerRow.Gate)
}

extension AnalyzerTable {
    /// Row `index`'s state after the last `step` (or `reset`), judged at that step's frame time. Reads
    /// the table's state only: calling it never changes what the table decides. Cost: a few comparisons
    /// (plus the row's `suppressedBy` list for an idle row); no allocation. Not thread-safe (like the table).
    /// - Precondition: `index` is in `rows.indices`.
    public func state(ofRow index: Int) -> AnalyzerRowState {
        let row = rows[index]
        let s = states[index]
        let t = lastTime
        switch s.phase {
        case .pending: return .pending(held: max(0, t - s.onsetTime))
        case .active: return .active(held: max(0, t - s.onsetTime))
        case .latched: return .latched
        case .idle: break
        }
        if !lastGates.allows(row.gate) { return .gated(row.gate) }
        for j in suppressors[index] {
            let other = states[j]
            if other.phase == .pending || other.phase == .active || t - other.settledAt < row.cooldown {
                return .suppressed(by: rows[j].event)
            }
        }
        if t < s.cooldownUntil { return .coolingDown(remaining: s.cooldownUntil - t) }
        return .idle
    }
}
