#include "CNcurses.h"

#include <ncurses.h>
#include <stdio.h>

static SCREEN *screen = NULL;
static int colours = 0;

int wink_curses_start(void) {
    if (screen != NULL) return 0;
    screen = newterm(NULL, stdout, stdin);
    if (screen == NULL) return -1;
    set_term(screen);
    cbreak();
    noecho();
    nonl();
    nodelay(stdscr, TRUE);
    keypad(stdscr, TRUE);
    curs_set(0);
    if (has_colors() && start_color() == OK) {
        use_default_colors();
        init_pair(1, COLOR_YELLOW, -1);
        init_pair(2, COLOR_GREEN, -1);
        init_pair(3, COLOR_RED, -1);
        colours = 1;
    }
    return 0;
}

void wink_curses_stop(void) {
    if (screen == NULL) return;
    curs_set(1);
    endwin();
    delscreen(screen);
    screen = NULL;
    fflush(stdout);
}

void wink_curses_size(int *rows, int *columns) {
    *rows = screen != NULL ? LINES : 0;
    *columns = screen != NULL ? COLS : 0;
}

void wink_curses_erase(void) { erase(); }

static attr_t attributes(int style) {
    switch (style) {
    case WINK_STYLE_BOLD: return A_BOLD;
    case WINK_STYLE_PENDING: return colours ? COLOR_PAIR(1) | A_BOLD : A_BOLD;
    case WINK_STYLE_ACTIVE: return colours ? COLOR_PAIR(2) | A_BOLD : A_BOLD | A_UNDERLINE;
    case WINK_STYLE_DIM: return A_DIM;
    case WINK_STYLE_FLASH: return A_REVERSE | A_BOLD;
    case WINK_STYLE_HEADER: return A_REVERSE;
    case WINK_STYLE_ALERT: return colours ? COLOR_PAIR(3) | A_BOLD : A_BOLD;
    default: return A_NORMAL;
    }
}

void wink_curses_text(int row, int column, const char *text, int length, int style) {
    if (row < 0 || row >= LINES || column < 0 || column >= COLS || length <= 0) return;
    if (length > COLS - column) length = COLS - column;
    attr_t a = attributes(style);
    if (a != A_NORMAL) attron(a);
    mvaddnstr(row, column, text, length);
    if (a != A_NORMAL) attroff(a);
}

void wink_curses_refresh(void) { refresh(); }

int wink_curses_key(void) {
    int key = getch();
    if (key == ERR) return WINK_KEY_NONE;
    if (key == KEY_RESIZE) return WINK_KEY_RESIZE;
    return key;
}
