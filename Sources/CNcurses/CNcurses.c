// wcwidth(3) and ncursesw's wide-character calls (mvaddnwstr) are X/Open: declared before any header.
#define _XOPEN_SOURCE 700
#define _XOPEN_SOURCE_EXTENDED 1

#include "CNcurses.h"

#include <langinfo.h>
#include <locale.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static SCREEN *screen = NULL;
static int colours = 0;

int wink_curses_start(void) {
    if (screen != NULL) return 0;
    // ncursesw draws multibyte text in the locale's character set only: without this, in the "C" locale a
    // file name's "é" or the title's "…" came out as "~@" (and took two cells). LC_CTYPE alone: number
    // formatting stays the C locale's.
    setlocale(LC_CTYPE, "");
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

int wink_curses_unicode(void) {
    const char *set = nl_langinfo(CODESET);
    return set != NULL && (strcmp(set, "UTF-8") == 0 || strcmp(set, "utf8") == 0);
}

void wink_curses_text(int row, int column, const char *text, int length, int style) {
    if (row < 0 || row >= LINES || column < 0 || column >= COLS || length <= 0) return;
    // Clipped by cells, not bytes (a 3-byte "…" cut "c clear" to "c cl"): wcwidth(3) per character, a
    // character the locale cannot draw as '?' in one cell, a combining one in none.
    wchar_t *wide = malloc(sizeof(wchar_t) * (size_t)(length + 1));
    if (wide == NULL) return;
    int count = 0, cells = 0;
    mbstate_t state;
    memset(&state, 0, sizeof state);
    for (int i = 0; i < length;) {
        wchar_t c;
        size_t used = mbrtowc(&c, text + i, (size_t)(length - i), &state);
        if (used == 0) break;
        if (used == (size_t)-1 || used == (size_t)-2) {  // not a character of the locale's set
            c = L'?';
            used = 1;
            memset(&state, 0, sizeof state);
        }
        int w = wcwidth(c);
        if (w < 0) {
            c = L'?';
            w = 1;
        }
        if (cells + w > COLS - column) break;
        wide[count++] = c;
        cells += w;
        i += (int)used;
    }
    attr_t a = attributes(style);
    if (a != A_NORMAL) attron(a);
    mvaddnwstr(row, column, wide, count);
    if (a != A_NORMAL) attroff(a);
    free(wide);
}

void wink_curses_refresh(void) { refresh(); }

int wink_curses_key(void) {
    int key = getch();
    if (key == ERR) return WINK_KEY_NONE;
    if (key == KEY_RESIZE) return WINK_KEY_RESIZE;
    return key;
}
