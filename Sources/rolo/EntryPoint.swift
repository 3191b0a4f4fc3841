import Foundation
import RoloServer

/// Starts `rolo`. Before any task exists (hence a synchronous main) it makes NIO's event
/// loops run Swift's tasks, so a request is answered on the thread that read it (see
/// `EventLoopTasks`); then it runs the command and exits with its status.
@main
enum EntryPoint {
    static func main() {
        if EventLoopTasks.isWanted(environment: ProcessInfo.processInfo.environment) {
            EventLoopTasks.install()
        }
        Task {
            await Rolo.main()
            exit(0)
        }
        dispatchMain()
    }
}
