import Foundation
import RoloServer

/// Starts `rolo`. Before any task exists (hence a synchronous main) it makes NIO's event
/// loops run Swift's tasks, so a request is answered on the thread that read it (see
/// `EventLoopTasks`) and sets how malloc keeps memory between requests (`MallocTuning`);
/// then it runs the command and exits with its status.
@main
enum EntryPoint {
    static func main() {
        let environment = ProcessInfo.processInfo.environment
        MallocTuning.apply(environment: environment)
        if EventLoopTasks.isWanted(environment: environment) {
            EventLoopTasks.install()
        }
        Task {
            await Rolo.main()
            exit(0)
        }
        dispatchMain()
    }
}
