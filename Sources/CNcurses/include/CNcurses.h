// CNcurses: the few ncurses calls `winkctl monitor` needs, behind plain C functions (ncurses' own header
// is full of macros Swift cannot import). Linked against libncursesw (Debian: libncurses-dev).
//
// Thread-safety: none; ncurses keeps global state. Call everything from one thread.
#ifndef CNCURSES_H
#define CNCURSES_H

#ifdef __cplusplus
extern "C" {
#endif

/// Styles for wink_curses_text.
enum {
    WINK_STYLE_PLAIN = 0,
    WINK_STYLE_BOLD = 1,
    WINK_STYLE_PENDING = 2,  // yellow
    WINK_STYLE_ACTIVE = 3,   // green, bold
    WINK_STYLE_DIM = 4,      // cooling, suppressed, gated
    WINK_STYLE_FLASH = 5,    // reverse, bold: a row that just fired
    WINK_STYLE_HEADER = 6,   // reverse: the title bar
    WINK_STYLE_ALERT = 7,    // red, bold
};

/// wink_curses_key's value for a terminal resize (ncurses' KEY_RESIZE), and for no key waiting.
enum { WINK_KEY_NONE = -1, WINK_KEY_RESIZE = -2 };

/// Starts full-screen mode on the terminal behind stdin/stdout with newterm(3) (which, unlike initscr,
/// returns instead of exiting when $TERM is unknown): cbreak, no echo, non-blocking keys with keypad
/// decoding, hidden cursor, colours when the terminal has them. Returns 0, or -1 when the terminal cannot
/// be used (nothing to undo then).
int wink_curses_start(void);

/// Leaves full-screen mode and restores the terminal's modes (endwin). Safe to call twice or unstarted.
void wink_curses_stop(void);

/// The screen's size in character cells, as of the last resize ncurses saw.
void wink_curses_size(int *rows, int *columns);

/// Blanks the whole virtual screen (erase(3): the terminal is only touched at the next refresh, where
/// ncurses sends just the differences, so redrawing everything each frame does not flicker).
void wink_curses_erase(void);

/// Writes `length` bytes of `text` (in the locale's character set, UTF-8 in a UTF-8 locale) at (row,
/// column) in `style`, clipped at the right edge by cells (wcwidth(3): two for a wide character, none for a
/// combining one). A byte sequence that is not a character of the locale (UTF-8 text in the "C" locale),
/// or a character it cannot draw, is drawn as '?'.
void wink_curses_text(int row, int column, const char *text, int length, int style);

/// 1 when the locale's character set (LC_CTYPE, from the environment at wink_curses_start) is UTF-8, so
/// characters such as "…" can be drawn; 0 otherwise (the "C" locale: ASCII only).
int wink_curses_unicode(void);

/// Sends what changed since the last refresh to the terminal.
void wink_curses_refresh(void);

/// The next key pressed (a byte, 0...255, or an ncurses KEY_ code), WINK_KEY_RESIZE after a resize
/// (ncurses handles SIGWINCH itself), or WINK_KEY_NONE when none waits. Never blocks.
int wink_curses_key(void);

#ifdef __cplusplus
}
#endif

#endif
