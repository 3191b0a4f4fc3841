/// LOCK/UNLOCK: Rolo does not advertise class 2, so both are refused with 405 (litmus then
/// skips its lock tests) rather than pretending locks that would not hold.
extension DAVService {
    func lock(_ request: DAVRequest) -> DAVResponse {
        DAVResponse(status: 405, headers: [("Allow", Self.allowedMethods), ("Content-Length", "0")])
    }
}
