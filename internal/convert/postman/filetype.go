package postman

import (
	"path/filepath"
	"strings"
)

// fileTypes are the content types Postman's runtime gives a file part
// that names none: newman 6.2.2's form-data looks the file's extension up
// with mime-types 2.1.35 (mime-db 1.52.0); these are its answers for the
// common extensions (node -e 'require("mime-types").lookup("f.csv")').
var fileTypes = map[string]string{
	"txt": "text/plain", "log": "text/plain", "ini": "text/plain", "csv": "text/csv", "tsv": "text/tab-separated-values",
	"json": "application/json", "jsonld": "application/ld+json", "geojson": "application/geo+json",
	"xml": "application/xml", "html": "text/html", "htm": "text/html", "css": "text/css",
	"js": "application/javascript", "mjs": "application/javascript", "md": "text/markdown",
	"yaml": "text/yaml", "yml": "text/yaml", "toml": "application/toml", "sql": "application/x-sql",
	"ics": "text/calendar", "vcf": "text/x-vcard", "eml": "message/rfc822", "rtf": "application/rtf",
	"pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
	"webp": "image/webp", "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon", "bmp": "image/bmp",
	"tif": "image/tiff", "tiff": "image/tiff", "avif": "image/avif", "heic": "image/heic",
	"zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar", "7z": "application/x-7z-compressed",
	"rar": "application/vnd.rar", "bz2": "application/x-bzip2", "jar": "application/java-archive", "epub": "application/epub+zip",
	"doc": "application/msword", "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"ppt": "application/vnd.ms-powerpoint", "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
	"mp3": "audio/mpeg", "wav": "audio/wave", "ogg": "audio/ogg", "mp4": "video/mp4", "webm": "video/webm",
	"mov": "video/quicktime", "avi": "video/x-msvideo", "bin": "application/octet-stream", "wasm": "application/wasm",
	"woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
	"p12": "application/x-pkcs12", "pem": "application/x-x509-ca-cert", "crt": "application/x-x509-ca-cert", "der": "application/x-x509-ca-cert",
	"sh": "application/x-sh", "java": "text/x-java-source", "c": "text/x-c", "h": "text/x-c",
}

// fileType is the content type Postman sends a file part with when the
// collection gives none, and whether the extension is one fileTypes
// knows (otherwise application/octet-stream, which is also Postman's
// answer for an extension mime-db does not list).
func fileType(path string) (string, bool) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if t, ok := fileTypes[ext]; ok {
		return t, true
	}
	return "application/octet-stream", false
}
