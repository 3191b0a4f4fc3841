import Foundation
import HTTPTypes
import Hummingbird
import RoloWeb

/// Nextcloud Login Flow v2's two endpoints on the Rolo host (the flow itself and its page:
/// `LoginFlows` in RoloWeb). `POST /index.php/login/v2` starts a flow for the client its
/// User-Agent names; `POST /index.php/login/v2/poll` with `token=…` answers 404 until the
/// signed-in user grants it in the web UI, then once the server, user and app password,
/// then 404 again. Neither needs credentials: the poll token is the secret.
struct LoginFlowEndpoint {
    static let start = "/index.php/login/v2"
    static let poll = "/index.php/login/v2/poll"

    let flows: LoginFlows
    /// `RoloResponder.publicRoot`: what the client is told to use.
    let root: String

    func answer(path: String, userAgent: String?, body: Data) async -> Response {
        if path == Self.start {
            let flow = await flows.start(client: userAgent ?? "")
            return Self.json([
                "poll": ["token": flow.pollToken, "endpoint": root + Self.poll],
                "login": root + WebApp.prefix + "/login-flow/" + flow.loginID,
            ])
        }
        let form = Self.form(body)
        guard let token = form["token"], !token.isEmpty, let grant = await flows.poll(token: token) else {
            return RoloResponder.plain(.notFound, "Not Found\n")
        }
        return Self.json(["server": root, "loginName": grant.user, "appPassword": grant.appPassword])
    }

    /// `token=…` from a form body (or a JSON object, which some clients send).
    static func form(_ body: Data) -> [String: String] {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            return object.compactMapValues { $0 as? String }
        }
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    static func json(_ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
