package dataset

// ValidJSON exposes the line validator so FuzzParser can check it against
// json.Valid.
var ValidJSON = validJSON
