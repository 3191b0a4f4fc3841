/// Reason phrases for the statuses the engine writes into multistatus bodies.
enum HTTPStatus {
    static func reason(_ code: Int) -> String {
        switch code {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 207: "Multi-Status"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Payload Too Large"
        case 415: "Unsupported Media Type"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 507: "Insufficient Storage"
        default: "Status \(code)"
        }
    }

    /// `HTTP/1.1 404 Not Found`, as `DAV:status` wants it.
    static func line(_ code: Int) -> String { "HTTP/1.1 \(code) \(reason(code))" }
}
