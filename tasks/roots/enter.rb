# frozen_string_literal: true

# Runs one command inside a root filesystem made by `rake test:rubies`, with
# the checkout and cargo's caches bind-mounted at their own absolute paths:
#
#   unshare --mount --propagation private -- \
#     ruby tasks/roots/enter.rb ROOT CHECKOUT TIMEOUT [--private PATH]... [--own-toolchain] -- COMMAND...
#
# Each --private PATH (relative to the checkout) is replaced, for this run,
# by a directory of the root's own (under /var/lib/sass-embedded-private in
# the root), so that builds of two roots of one Ruby minor do not overwrite
# each other. --own-toolchain leaves the machine's rustup toolchain out (a
# root of another architecture builds with its own cargo and rustc); cargo's
# registry cache is still shared.
#
# tasks/roots.rb starts it in a mount namespace of its own (unshare), so
# every mount made here is private to this run: the machine's namespace never
# sees them, and if this process is killed outright the kernel drops them with
# the namespace. Still, this script unmounts each one (in reverse order) in an
# ensure block, after the command and everything it started in the same
# process group have ended, whatever happened. The command runs under
# `timeout` (TIMEOUT seconds), as root, with a clean environment.

root, checkout, limit, *rest = ARGV
private_paths = []
private_paths << rest.shift(2).last while rest.first == '--private' && rest.size > 2
own_toolchain = rest.first == '--own-toolchain' && rest.shift
separator, *command = rest
unless separator == '--' && !command.empty? && File.directory?(root) && File.directory?(checkout)
  abort "usage: #{$PROGRAM_NAME} ROOT CHECKOUT TIMEOUT [--private PATH]... [--own-toolchain] -- COMMAND..."
end

cargo_home = ENV.fetch('CARGO_HOME', File.join(Dir.home, '.cargo'))
rustup_home = ENV.fetch('RUSTUP_HOME', File.join(Dir.home, '.rustup'))

# Variables the run may use (the suite's and the benchmark's knobs, a
# release's SOURCE_DATE_EPOCH); nothing
# else of this process's environment (RUBYOPT, GEM_*, ...) reaches the root.
knobs = /\A(SASS_|STRESS_|BENCH_|TESTOPTS\z|TEST\z|CI\z|TERM\z|CARGO_BUILD_JOBS\z|SOURCE_DATE_EPOCH\z)/
passed = ENV.select { |name, _| name.match?(knobs) }
system_path = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
# A root with its own toolchain gets a CARGO_HOME of its own too (cargo
# would run the machine's rustup proxies from CARGO_HOME/bin as its
# subcommands), holding the machine's registry.
own_cargo_home = '/var/lib/sass-embedded-cargo'
toolchain = if own_toolchain
              { 'CARGO_HOME' => own_cargo_home, 'PATH' => system_path }
            else
              { 'CARGO_HOME' => cargo_home, 'RUSTUP_HOME' => rustup_home,
                'PATH' => "#{File.join(cargo_home, 'bin')}:#{system_path}" }
            end
environment = passed.merge('HOME' => Dir.home, 'LANG' => 'C.UTF-8', **toolchain)

mounted = []
mount = lambda do |*arguments, target|
  system('mkdir', '-p', target, exception: true)
  system('mount', *arguments, target, exception: true)
  mounted.unshift(target)
end

child = nil
status = nil
begin
  # Nothing mounted below may propagate back out of this namespace.
  system('mount', '--make-rprivate', '/', exception: true)
  mount.call('-t', 'proc', 'proc', File.join(root, 'proc'))
  mount.call('-t', 'tmpfs', '-o', 'mode=1777,nosuid,nodev', 'tmpfs', File.join(root, 'dev', 'shm'))
  mount.call('-t', 'tmpfs', '-o', 'mode=1777', 'tmpfs', File.join(root, 'tmp'))
  shared = own_toolchain ? { File.join(cargo_home, 'registry') => File.join(own_cargo_home, 'registry') } : {}
  [checkout, *(cargo_home unless own_toolchain), *(rustup_home unless own_toolchain)].uniq.each do |path|
    shared[path] = path
  end
  shared.each do |path, inside|
    system('mkdir', '-p', path, exception: true)
    mount.call('--bind', path, File.join(root, inside))
  end
  # The machine's CA bundle over the root's, since it may hold a CA (a
  # proxy's) that the root's lacks: for cargo's downloads there (Debian's
  # cargo asks libcurl, which reads the bundle's path, not SSL_CERT_FILE).
  ca_file = ENV.fetch('SSL_CERT_FILE', '/etc/ssl/certs/ca-certificates.crt')
  root_ca_file = File.join(root, 'etc', 'ssl', 'certs', 'ca-certificates.crt')
  if File.file?(ca_file) && File.file?(root_ca_file)
    system('mount', '--bind', ca_file, root_ca_file, exception: true)
    mounted.unshift(root_ca_file)
    environment['SSL_CERT_FILE'] = '/etc/ssl/certs/ca-certificates.crt'
  end
  private_paths.each do |path|
    own = File.join(root, 'var', 'lib', 'sass-embedded-private', path)
    system('mkdir', '-p', own, File.join(checkout, path), exception: true)
    mount.call('--bind', own, File.join(root, checkout, path))
  end

  script = 'cd "$1" && shift && exec "$@"'
  child = Process.spawn('timeout', '--kill-after=30', limit, 'chroot', root, '/usr/bin/env', '-i',
                        *environment.map { |name, value| "#{name}=#{value}" },
                        '/bin/sh', '-c', script, 'sh', checkout, *command)
  _, status = Process.wait2(child)
ensure
  if child && status.nil?
    # Interrupted (Ctrl-C, TERM): end the command before unmounting under it.
    begin
      Process.kill(:TERM, child)
      30.times do
        break if Process.wait(child, Process::WNOHANG)

        sleep 1
      end
      # timeout runs the command in a process group of its own (its pid).
      if Process.wait(child, Process::WNOHANG).nil?
        Process.kill(:KILL, -child)
        Process.wait(child)
      end
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end
  end
  mounted.each do |target|
    next if system('umount', target)

    warn "enter.rb: #{target} is busy; detaching it (umount --lazy)"
    system('umount', '--lazy', target)
  end
end

exit(status.exitstatus || (128 + status.termsig))
