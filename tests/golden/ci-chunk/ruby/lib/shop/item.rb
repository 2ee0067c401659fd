# frozen_string_literal: true

module Shop
  # A line of the cart: a product and how many of it.
  Item = Struct.new(:sku, :price_cents, :quantity) do
    def total_cents
      price_cents * quantity
    end
  end
end
