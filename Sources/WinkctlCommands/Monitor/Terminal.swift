import CNcurses

/// The full-screen terminal behind stdin/stdout, through ncurses (`CNcurses`). One at a time; use it from
/// one thread only (ncurses keeps global state).
final class Terminal {
    /// A key press, or a resize.
    enum Key: Equatable {
        case character(UInt8)
        case resize
        /// An ncurses function-key code (arrows and the like), unused by the monitor.
        case other(Int32)
    }

    /// Enters full-screen mode (cbreak, no echo, hidden cursor).
    /// - Throws: `TerminalError` when ncurses cannot use the terminal ($TERM unknown).
    init() throws {
        guard wink_curses_start() == 0 else { throw TerminalError() }
        unicode = wink_curses_unicode() != 0
    }

    /// Whether the terminal's locale is UTF-8; otherwise the layout is drawn in ASCII
    /// (`MonitorScreen.layout(unicode:)`).
    let unicode: Bool

    deinit { stop() }

    /// Leaves full-screen mode and restores the terminal's modes. Idempotent.
    func stop() { wink_curses_stop() }

    /// The screen's size in cells.
    var size: (rows: Int, columns: Int) {
        var rows: Int32 = 0
        var columns: Int32 = 0
        wink_curses_size(&rows, &columns)
        return (Int(rows), Int(columns))
    }

    /// Draws `texts` on a blank screen and sends the differences to the terminal (no flicker).
    func draw(_ texts: [MonitorScreen.Text]) {
        wink_curses_erase()
        for t in texts {
            t.text.withCString {
                wink_curses_text(Int32(t.row), Int32(t.column), $0, Int32(t.text.utf8.count), t.style.rawValue)
            }
        }
        wink_curses_refresh()
    }

    /// The next key waiting, nil when none. Never blocks.
    func key() -> Key? {
        let k = wink_curses_key()
        switch k {
        case Int32(WINK_KEY_NONE): return nil
        case Int32(WINK_KEY_RESIZE): return .resize
        case 0...255: return .character(UInt8(k))
        default: return .other(k)
        }
    }
}

/// ncurses could not start on this terminal.
struct TerminalError: Error, CustomStringConvertible {
    var description: String { "monitor: cannot use this terminal (is TERM set to a known terminal type?)" }
}
