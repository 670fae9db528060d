-- PostgreSQL version (unquoted names fold to lower case, as in the job).
-- Sample board for config/minesweeper.yaml: one row per cell, (x, y) -> state, as the classic
-- T-SQL Minesweeper stores it. State codes: -1 unrevealed, -100 flagged, 0 revealed and empty,
-- 1-8 revealed with that many neighbouring mines, 9 a mine (shown when the game is over).
-- A 10x10 game that just ended: ten mines, two of them flagged, the top-left 7x7 revealed.
CREATE TABLE MINESWEEPER_BOARD (
  x     INTEGER NOT NULL,
  y     INTEGER NOT NULL,
  state INTEGER NOT NULL,
  PRIMARY KEY (x, y)
);
INSERT INTO MINESWEEPER_BOARD (x, y, state) VALUES
  (1, 1, 1), (2, 1, -100), (3, 1, 1), (4, 1, 0), (5, 1, 0), (6, 1, 1), (7, 1, 9), (8, 1, -1), (9, 1, -1), (10, 1, -1),
  (1, 2, 1), (2, 2, 1), (3, 2, 2), (4, 2, 1), (5, 2, 1), (6, 2, 1), (7, 2, 1), (8, 2, -1), (9, 2, -1), (10, 2, -1),
  (1, 3, 0), (2, 3, 0), (3, 3, 1), (4, 3, 9), (5, 3, 1), (6, 3, 0), (7, 3, 0), (8, 3, -1), (9, 3, -100), (10, 3, -1),
  (1, 4, 1), (2, 4, 1), (3, 4, 1), (4, 4, 1), (5, 4, 1), (6, 4, 0), (7, 4, 0), (8, 4, -1), (9, 4, -1), (10, 4, -1),
  (1, 5, 9), (2, 5, 1), (3, 5, 0), (4, 5, 0), (5, 5, 1), (6, 5, 1), (7, 5, 1), (8, 5, -1), (9, 5, -1), (10, 5, -1),
  (1, 6, 1), (2, 6, 1), (3, 6, 0), (4, 6, 0), (5, 6, 1), (6, 6, 9), (7, 6, 1), (8, 6, -1), (9, 6, -1), (10, 6, -1),
  (1, 7, 0), (2, 7, 1), (3, 7, 1), (4, 7, 1), (5, 7, 1), (6, 7, 1), (7, 7, 2), (8, 7, -1), (9, 7, -1), (10, 7, -1),
  (1, 8, -1), (2, 8, -1), (3, 8, 9), (4, 8, -1), (5, 8, -1), (6, 8, -1), (7, 8, -1), (8, 8, 9), (9, 8, -1), (10, 8, -1),
  (1, 9, -1), (2, 9, -1), (3, 9, -1), (4, 9, -1), (5, 9, -1), (6, 9, -1), (7, 9, -1), (8, 9, -1), (9, 9, -1), (10, 9, 9),
  (1, 10, -1), (2, 10, -1), (3, 10, -1), (4, 10, -1), (5, 10, 9), (6, 10, -1), (7, 10, -1), (8, 10, -1), (9, 10, -1), (10, 10, -1);
