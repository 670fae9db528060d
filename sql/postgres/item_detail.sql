-- PostgreSQL version of sql/sqlite/item_detail.sql (unquoted names fold to lower case, as in the job).
-- Sample source for config/item_detail.yaml: the classic ITEM_DETAIL / ATTRIBUTE_ELEMENT /
-- ELEMENT_LIST layout. List-type elements store a LIST_ID that ELEMENT_LIST resolves;
-- free-form elements store DETAIL_VALUE. Items are sparse: not every item has every element.
CREATE TABLE ATTRIBUTE_ELEMENT (
  ELEMENT_ID   INTEGER PRIMARY KEY,
  ELEMENT_DESC VARCHAR(100) NOT NULL
);
CREATE TABLE ELEMENT_LIST (
  ELEMENT_ID INTEGER NOT NULL,
  LIST_ID    INTEGER NOT NULL,
  LIST_DESC  VARCHAR(100) NOT NULL,
  PRIMARY KEY (ELEMENT_ID, LIST_ID)
);
CREATE TABLE ITEM_DETAIL (
  ITEM_ID      INTEGER NOT NULL,
  ELEMENT_ID   INTEGER NOT NULL,
  LIST_ID      INTEGER,
  DETAIL_VALUE VARCHAR(400),
  PRIMARY KEY (ITEM_ID, ELEMENT_ID)
);
INSERT INTO ATTRIBUTE_ELEMENT (ELEMENT_ID, ELEMENT_DESC) VALUES
  (1, 'Color'), (2, 'Size'), (3, 'Weight (kg)'), (4, 'Material'), (5, 'Voltage'),
  (6, 'Warranty 2 years'), (7, 'Warranty 10 years');
INSERT INTO ELEMENT_LIST (ELEMENT_ID, LIST_ID, LIST_DESC) VALUES
  (1, 1, 'Red'), (1, 2, 'Blue'), (1, 3, 'Black'),
  (2, 1, 'S'), (2, 2, 'M'), (2, 3, 'L'),
  (4, 1, 'Steel'), (4, 2, 'Oak'), (4, 3, 'Cotton');
INSERT INTO ITEM_DETAIL (ITEM_ID, ELEMENT_ID, LIST_ID, DETAIL_VALUE) VALUES
  (1001, 1, 1, NULL), (1001, 2, 2, NULL), (1001, 3, NULL, '1.25'), (1001, 4, 3, NULL),
  (1002, 1, 2, NULL), (1002, 3, NULL, '0.40'), (1002, 6, NULL, 'yes'),
  (1003, 4, 1, NULL), (1003, 5, NULL, '230'), (1003, 7, NULL, 'yes'), (1003, 3, NULL, '12.5'),
  (1004, 1, 3, NULL), (1004, 2, 3, NULL), (1004, 4, 2, NULL),
  (1005, 5, NULL, '12'), (1005, 1, 9, 'unlisted: Green');
