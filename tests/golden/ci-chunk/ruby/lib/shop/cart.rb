# frozen_string_literal: true

require "json"
require "bigdecimal"
require_relative "item"

module Shop
  class Error < StandardError; end

  # Discounts that can apply to a whole cart.
  module Discounts
    PERCENT = ->(cart, pct) { cart.subtotal_cents * pct / 100 }

    def self.for_code(code)
      case code
      when /\ASAVE(\d+)\z/ then [PERCENT, Regexp.last_match(1).to_i]
      when nil, "" then nil
      else
        raise Error, "unknown discount code #{code}"
      end
    end
  end

  # A shopping cart: items by SKU, plus an optional discount code.
  class Cart
    include Enumerable

    attr_reader :currency

    def initialize(currency: "EUR")
      @currency = currency
      @items = {}
      @code = nil
    end

    def self.from_json(text)
      data = JSON.parse(text)
      cart = new(currency: data.fetch("currency", "EUR"))
      data["items"].each { |i| cart.add(i["sku"], i["price_cents"], i["quantity"]) }
      cart
    end

    def add(sku, price_cents, quantity = 1)
      raise ArgumentError, "quantity must be positive" unless quantity.positive?

      if (item = @items[sku])
        item.quantity += quantity
      else
        @items[sku] = Item.new(sku, price_cents, quantity)
      end
      self
    end

    def each(&block)
      @items.each_value(&block)
    end

    def apply(code)
      Discounts.for_code(code)
      @code = code
    end

    def subtotal_cents
      sum(&:total_cents)
    end

    def total
      discount = @code ? Discounts.for_code(@code).then { |f, pct| f.call(self, pct) } : 0
      BigDecimal(subtotal_cents - discount) / 100
    end

    private

    def to_h
      { currency: @currency, items: map(&:to_h) }
    end
  end
end
