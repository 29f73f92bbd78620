// ALIAS: what both tool servers (SanyServer, TlcServer) share.
package aliastools;

final class ParentWatch {
  private ParentWatch() {
  }

  /** Ends this JVM soon after the process that started it is gone: a killed client leaves
   *  no SANY or TLC running (the client's time limit no longer applies to it). */
  static void start() {
    ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
    if (parent == null) {
      return;
    }
    Thread watch = new Thread(() -> {
      while (parent.isAlive()) {
        try {
          Thread.sleep(1000);
        } catch (InterruptedException e) {
          return;
        }
      }
      Runtime.getRuntime().halt(137);
    }, "alias-parent-watch");
    watch.setDaemon(true);
    watch.start();
  }
}
