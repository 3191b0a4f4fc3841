import RoloServer
import Foundation
import HTTPTypes
import Hummingbird

/// Every request outside `/_rolo/` while the test API is on: numbered, matched against the
/// fault rules, answered (normally or as the rule says) and recorded in the request log.
extension TestControl {
    /// Handles `request` (at percent-decoded `path`) with `next`, the server's normal
    /// handling, unless a fault rule applies; records the exchange either way.
    func intercept(_ request: Request, path: String,
                   next: (Request) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let method = request.method.rawValue.uppercased()
        let digest = BodyDigest(headers: request.headers)
        var request = request

        var carriesSyncToken = false
        if method == "REPORT", await state.expectsSyncToken(path: path) {
            // Only a sync-collection REPORT's body tells whether the rule applies: read it
            // now (within the usual limit) and hand the same bytes on.
            let limit = limits.maxBodySize(forMethod: method)
            guard let body = try await Self.collect(request.body, limit: limit) else {
                let (seq, _) = await state.arrive(method: method, path: path, carriesSyncToken: false)
                let response = ServerAnswers.tooLarge(method: method, limit: limit)
                await record(seq: seq, request: request, path: path, digest: digest, response: response, started: started, fault: nil)
                return response
            }
            digest.observe(body)
            digest.finish()
            carriesSyncToken = FaultResponses.carriesSyncToken(body)
            request.body = RequestBody(buffer: body)
        } else {
            request.body = digest.digesting(request.body)
        }

        let (seq, fault) = await state.arrive(method: method, path: path, carriesSyncToken: carriesSyncToken)
        let response = if let fault {
            try await apply(fault, to: request, method: method, next: next)
        } else {
            try await next(request)
        }
        await record(seq: seq, request: request, path: path, digest: digest, response: response,
                     started: started, fault: fault?.id)
        return response
    }

    /// The answer `fault` gives `request` in place of (or around) the normal one.
    private func apply(_ fault: FaultRuleSpec, to request: Request, method: String,
                       next: (Request) async throws -> Response) async throws -> Response {
        switch fault.fault {
        case .delay:
            try? await Task.sleep(for: .milliseconds(fault.delayMilliseconds ?? 0))
            return try await next(request)
        case .dropConnection:
            return FaultResponses.cut(try await next(request))
        case .status:
            await drainBody(of: request, method: method)
            return FaultResponses.status(fault)
        case .preconditionFailed:
            await drainBody(of: request, method: method)
            return FaultResponses.preconditionFailed()
        case .expireSyncToken:
            return FaultResponses.invalidSyncToken()
        }
    }

    /// Reads (through its digest) the body of a request a fault answers without the normal
    /// handling, so the log still names what the client sent. Only a body that fits the
    /// method's limit is read; a declared-larger one is left alone (the client may be
    /// waiting for 100 Continue).
    private func drainBody(of request: Request, method: String) async {
        let limit = limits.maxBodySize(forMethod: method)
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit { return }
        var read = 0
        do {
            for try await chunk in request.body {
                read += chunk.readableBytes
                if read > limit { return }
            }
        } catch {
            // The client went away: the digest stays incomplete, and the log says so.
        }
    }

    private func record(seq: Int, request: Request, path: String, digest: BodyDigest, response: Response,
                        started: ContinuousClock.Instant, fault: Int?) async {
        var headers: [String: String] = [:]
        for name in RequestLog.recordedHeaders {
            guard let fieldName = HTTPField.Name(name) else { continue }
            let values = request.headers[values: fieldName]
            if !values.isEmpty { headers[name] = values.joined(separator: ", ") }
        }
        let accepted = response.status.code != 401
        let user = accepted ? request.headers[.authorization].flatMap(ServerAnswers.basicUser) : nil
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let body = digest.result
        await state.record(RecordedRequest(
            seq: seq, method: request.method.rawValue, path: path, headers: headers,
            bodySHA256: body?.sha256, bodyLength: body?.length, status: Int(response.status.code),
            durationMilliseconds: (milliseconds * 1000).rounded() / 1000, user: user, fault: fault))
    }

    /// The whole body, or nil once it exceeds `limit`.
    private static func collect(_ body: RequestBody, limit: Int) async throws -> ByteBuffer? {
        var collected = ByteBuffer()
        for try await chunk in body {
            if collected.readableBytes + chunk.readableBytes > limit { return nil }
            collected.writeImmutableBuffer(chunk)
        }
        return collected
    }
}
