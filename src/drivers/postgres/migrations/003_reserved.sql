-- Reserved: this version changes nothing.
SELECT 1;
