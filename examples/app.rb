# A small log-analytics job: the example program sprof's demo and end-to-end
# test profile. app.c is this program as Spinel compiles it.
#
# Three Ruby methods do the work, with a known CPU split, and each call is
# timed with the calling thread's CPU clock so the profile can be checked
# against what the program measured itself:
#   Simulation#step   ~50 %  numeric kernel (floats, no allocation)
#   Indexer#tokenize  ~30 %  string work: allocates through the collector
#   Checksum.fnv      ~20 %  short (Spinel emits it static inline), runs on a thread
#
# Usage: app [SECONDS]   (or SPROF_EXAMPLE_SECONDS; CPU seconds of work, default 3)
# The measured split goes to stderr, or to the file named by SPROF_EXAMPLE_SPLIT.

LINE = "GET /api/items?id=42 200 0.013 Mozilla/5.0 (X11; Linux x86_64) gzip keep-alive"

def cpu_ns
  Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
end

class Simulation
  def initialize(n)
    @n = n
    @xs = Array.new(n) { |i| i * 0.001 }
    @vs = Array.new(n, 0.0)
  end

  # Leapfrog steps of n springs: pure float work.
  def step(iters)
    iters.times do
      i = 0
      while i < @n
        @vs[i] -= 0.001 * @xs[i]
        @xs[i] += 0.001 * @vs[i]
        i += 1
      end
    end
    @xs[0]
  end
end

class Indexer
  def initialize
    @words = 0
  end

  # Split a log line and upcase every word: every word is a new String.
  def tokenize(line, reps)
    total = 0
    reps.times do
      words = line.split(" ")
      words.each { |w| total += w.upcase.length }
    end
    @words += total
    total
  end
end

module Checksum
  # Short (two statements, no yield): Spinel emits it static inline.
  def self.fnv(seed, n)
    n.times { |i| seed = ((seed ^ (i & 255)) * 16777619) & 0xffffffff }
    seed
  end
end

class Verifier
  def initialize(jobs, results)
    @jobs = jobs
    @results = results
  end

  # Runs on the worker thread: checksum each job, report value and CPU time.
  def drain
    while (n = @jobs.pop) > 0
      t0 = cpu_ns
      sum = Checksum.fnv(n, n * 1000)
      @results.push(sum)
      @results.push(cpu_ns - t0)
    end
    @results.push(cpu_ns)
  end
end

class Pipeline
  def initialize(budget_ns)
    @budget_ns = budget_ns
    @sim = Simulation.new(2000)
    @idx = Indexer.new
    @cpu_sim = 0
    @cpu_tok = 0
    @cpu_sum = 0
    @check = 0
  end

  def run
    jobs = Queue.new
    results = Queue.new
    verifier = Verifier.new(jobs, results)
    worker = Thread.new { verifier.drain }
    while @cpu_sim + @cpu_tok + @cpu_sum < @budget_ns
      t0 = cpu_ns
      @sim.step(7500)
      t1 = cpu_ns
      @idx.tokenize(LINE, 7500)
      t2 = cpu_ns
      @cpu_sim += t1 - t0
      @cpu_tok += t2 - t1
      jobs.push(4000)
      @check ^= results.pop
      @cpu_sum += results.pop
    end
    jobs.push(0)
    worker_cpu = results.pop
    worker.join
    report(worker_cpu + cpu_ns)
  end

  def report(total_ns)
    out = "sprof-example cpu split (thread CPU clock)\n"
    out << "total_ns #{total_ns}\n"
    out << split_line("Simulation#step", @cpu_sim, total_ns)
    out << split_line("Indexer#tokenize", @cpu_tok, total_ns)
    out << split_line("Checksum.fnv", @cpu_sum, total_ns)
    path = ENV["SPROF_EXAMPLE_SPLIT"]
    if path
      File.write(path, out)
    else
      $stderr.print(out)
    end
  end
end

def split_line(name, ns, total_ns)
  format("method %s %d %.2f\n", name, ns, 100.0 * ns / total_ns)
end

seconds = (ARGV[0] || ENV["SPROF_EXAMPLE_SECONDS"] || "3").to_f
Pipeline.new((seconds * 1e9).to_i).run
