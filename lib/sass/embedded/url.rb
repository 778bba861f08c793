# frozen_string_literal: true

module Sass
  module Embedded
    # Conversions between filesystem paths and +file:+ URLs, for POSIX and
    # Windows paths alike: drive letters (+C:\\dir+ is +file:///C:/dir+), UNC
    # shares (+\\\\server\\share+ is +file://server/share+), and every byte that
    # is not allowed in a URL path percent-encoded (UTF-8 for non-ASCII).
    module Url
      # A URL scheme, as RFC 3986 allows.
      SCHEME = /\A[A-Za-z][A-Za-z0-9+.-]*\z/
      # What the brackets of an IP-literal host may hold: an IPv6 address or
      # an IPvFuture.
      IP_LITERAL = /\A(?:[0-9A-Fa-f:.]+|v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+)\z/

      module_function

      # The file path of a local +file:+ URL, nil for any other URL (or one
      # whose path is not valid in its encoding). Spelled with forward
      # slashes, as File.expand_path spells the paths it is compared with (on
      # Windows the URL's path has backslashes).
      # @param url [String]
      # @return [String, nil]
      def local_path(url)
        return unless url.start_with?('file:')

        path = file_url_to_path(url)
        path = path.tr(File::ALT_SEPARATOR, File::SEPARATOR) if File::ALT_SEPARATOR
        path.valid_encoding? ? path : nil
      rescue ArgumentError
        nil
      end

      # Why Dart Sass cannot parse +url+ as a URL, or nil if it can. Dart Sass
      # answers an unparsable entrypoint URL with a fatal protocol error
      # that stops the whole compiler, so the host refuses such URLs first.
      # Dart's parser is lenient (it escapes spaces and stray percent
      # signs); what it refuses is a malformed scheme or authority.
      # @param url [String]
      # @return [String, nil]
      def syntax_error(url)
        rest = url
        scheme_end = url.index(':')
        if scheme_end && !url[0...scheme_end].match?(%r{[/?#]})
          return 'its scheme is empty' if scheme_end.zero?
          return "its scheme #{url[0...scheme_end].inspect} is not a scheme" unless url[0...scheme_end].match?(SCHEME)

          rest = url[(scheme_end + 1)..]
        end
        return nil unless rest.start_with?('//')

        authority_error(rest[2..][%r{\A[^/?#]*}])
      end

      # Why an authority (+user@host:port+) is malformed, or nil.
      def authority_error(authority)
        host_port = authority.sub(/\A.*@/m, '')
        if host_port.start_with?('[')
          close = host_port.index(']')
          return 'its host has a [ without a matching ]' if close.nil?
          return 'its host is not an IP address in brackets' unless host_port[1...close].match?(IP_LITERAL)

          port = host_port[(close + 1)..]
          return "its host is followed by #{port.inspect}" unless port.empty? || port.start_with?(':')

          port = port[1..].to_s
        else
          return 'its host holds a [ or ]' if host_port.match?(/[\[\]]/)

          port = host_port.include?(':') ? host_port[(host_port.rindex(':') + 1)..] : ''
        end
        "its port #{port.inspect} is not a number" unless port.match?(/\A\d*\z/)
      end

      # @param path [String] an absolute path
      # @param windows [Boolean] whether +path+ is a Windows path (defaults to
      #   the platform's kind)
      # @return [String] the +file:+ URL of +path+
      def path_to_file_url(path, windows: windows?)
        path = path.to_s
        if windows
          path = path.tr('\\', '/')
          return "file:#{escape(path)}" if path.start_with?('//') # a UNC share: file://server/share

          path = "/#{path}" if path.match?(%r{\A[A-Za-z]:/}) || path.match?(/\A[A-Za-z]:\z/)
        end
        raise ArgumentError, "#{path.inspect} is not an absolute path" unless path.start_with?('/')

        "file://#{escape(path)}"
      end

      # @param url [String] a +file:+ URL
      # @param windows [Boolean] whether to make a Windows path
      # @return [String] the path +url+ refers to
      def file_url_to_path(url, windows: windows?)
        url = url.to_s
        raise ArgumentError, "#{url.inspect} is not a file: URL" unless url.downcase.start_with?('file:')

        rest = url.sub(/\Afile:/i, '').sub(/[?#].*\z/m, '')
        host, path = if rest.start_with?('//')
                       authority, _, remainder = rest[2..].partition('/')
                       [authority, "/#{remainder}"]
                     else
                       ['', rest]
                     end
        path = unescape(path)
        host = unescape(host)
        host = '' if host.casecmp?('localhost')
        return file_url_to_windows_path(host, path) if windows
        raise ArgumentError, "#{url.inspect} names a host (#{host}); only local file: URLs are paths" unless host.empty?

        path
      end

      def file_url_to_windows_path(host, path)
        return "\\\\#{host}#{path.tr('/', '\\')}" unless host.empty?

        path = path.delete_prefix('/') if path.match?(%r{\A/[A-Za-z]:(/|\z)})
        path.tr('/', '\\')
      end

      def escape(path)
        path.encode(Encoding::UTF_8).b.gsub(%r{[^A-Za-z0-9\-._~!$&'()*+,;=:@/]}n) do |byte|
          format('%%%<byte>02X', byte: byte.ord)
        end
      end

      def unescape(text)
        text.b.gsub(/%([0-9A-Fa-f]{2})/n) { Regexp.last_match(1).hex.chr }.force_encoding(Encoding::UTF_8)
      end

      def windows?
        Gem.win_platform?
      end
    end

    private_constant :Url
  end
end
