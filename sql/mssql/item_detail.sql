-- Sample source for config/item_detail.yaml, T-SQL (one batch, no GO): the classic
-- ITEM_DETAIL / ATTRIBUTE_ELEMENT / ELEMENT_LIST layout. List-type elements store a LIST_ID that ELEMENT_LIST resolves;
-- free-form elements store DETAIL_VALUE. Items are sparse: not every item has every element.
CREATE TABLE ATTRIBUTE_ELEMENT (
  ELEMENT_ID   INT NOT NULL PRIMARY KEY,
  ELEMENT_DESC NVARCHAR(100) NOT NULL
);
CREATE TABLE ELEMENT_LIST (
  ELEMENT_ID INT NOT NULL,
  LIST_ID    INT NOT NULL,
  LIST_DESC  NVARCHAR(100) NOT NULL,
  PRIMARY KEY (ELEMENT_ID, LIST_ID)
);
CREATE TABLE ITEM_DETAIL (
  ITEM_ID      INT NOT NULL,
  ELEMENT_ID   INT NOT NULL,
  LIST_ID      INT,
  DETAIL_VALUE NVARCHAR(400),
  PRIMARY KEY (ITEM_ID, ELEMENT_ID)
);
INSERT INTO ATTRIBUTE_ELEMENT (ELEMENT_ID, ELEMENT_DESC) VALUES
  (1, N'Color'), (2, N'Size'), (3, N'Weight (kg)'), (4, N'Material'), (5, N'Voltage'),
  (6, N'Warranty 2 years'), (7, N'Warranty 10 years');
INSERT INTO ELEMENT_LIST (ELEMENT_ID, LIST_ID, LIST_DESC) VALUES
  (1, 1, N'Red'), (1, 2, N'Blue'), (1, 3, N'Black'),
  (2, 1, N'S'), (2, 2, N'M'), (2, 3, N'L'),
  (4, 1, N'Steel'), (4, 2, N'Oak'), (4, 3, N'Cotton');
INSERT INTO ITEM_DETAIL (ITEM_ID, ELEMENT_ID, LIST_ID, DETAIL_VALUE) VALUES
  (1001, 1, 1, NULL), (1001, 2, 2, NULL), (1001, 3, NULL, N'1.25'), (1001, 4, 3, NULL),
  (1002, 1, 2, NULL), (1002, 3, NULL, N'0.40'), (1002, 6, NULL, N'yes'),
  (1003, 4, 1, NULL), (1003, 5, NULL, N'230'), (1003, 7, NULL, N'yes'), (1003, 3, NULL, N'12.5'),
  (1004, 1, 3, NULL), (1004, 2, 3, NULL), (1004, 4, 2, NULL),
  (1005, 5, NULL, N'12'), (1005, 1, 9, N'unlisted: Green');
